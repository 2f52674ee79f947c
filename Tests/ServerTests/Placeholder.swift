import Testing

@Test func placeholderServerTests() { #expect(1 + 1 == 2) }
