import Testing

@Test func placeholderDomainTests() { #expect(1 + 1 == 2) }
