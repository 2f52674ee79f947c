import Testing

@Test func placeholderJSONTests() { #expect(1 + 1 == 2) }
