import Testing

@Test func placeholderEventLogTests() { #expect(1 + 1 == 2) }
