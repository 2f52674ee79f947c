import Testing

@Test func placeholderUVTests() { #expect(1 + 1 == 2) }
