import JSON
import Protocol
import Testing

/// A refused field is named by its whole path in the request, nested ones included.
@Suite struct RequestDecoderMessageTests {
    private func message(_ line: String) throws -> String? {
        let json = try JSONParser.parse(Array(line.utf8))
        guard case .failure(let failure) = RequestDecoder.decode(json) else { return nil }
        return failure.error.message
    }

    @Test func nestedFieldsAreNamedByTheirPath() throws {
        let long = String(repeating: "a", count: 2_001)
        #expect(try message(#"{"id":1,"op":"complete_challenge","challenge":"c01","proof":{"kind":"photo","url":"https://x/\#(long)"}}"#)
                == "Field `proof.url` must be 1 to 2000 characters, got 2011")
        #expect(try message(#"{"id":1,"op":"complete_challenge","challenge":"c01","proof":{"kind":"text"}}"#)
                == "Missing field `proof.text`")
        #expect(try message(#"{"id":1,"op":"save_challenge","title":"t","description":"d","points":5,"difficulty":"easy","category":"social","option_b":{"title":""}}"#)
                == "Field `option_b.title` must be 1 to 120 characters, got 0")
        #expect(try message(#"{"id":1,"op":"save_reward","from":"f","title":"t","teaser":"t","type":"text","content":{"text":7}}"#)?
                .hasPrefix("Field `content.text`") == true)
    }

    @Test func textForPeopleMustShowSomethingIdentifiersNeedNot() throws {
        #expect(try message(#"{"id":1,"op":"save_secret","title":"  ","description":"d","points":25}"#)
                == "Field `title` must not be blank")
        #expect(try message(#"{"id":1,"op":"complete_challenge","challenge":"c01","proof":{"kind":"text","text":" \u200b "}}"#)
                == "Field `proof.text` must not be blank")
        #expect(try message(#"{"id":1,"op":"adjust_points","delta":5,"reason":"\t"}"#) == "Field `reason` must not be blank")
        #expect(try message(#"{"id":1,"op":"save_challenge","title":"t","description":"d","points":5,"difficulty":"easy","category":"social","option_b":{"title":"b","description":" "}}"#)
                == "Field `option_b.description` must not be blank")
        #expect(try message(#"{"id":1,"op":"claim","character":"mia","device":"   "}"#) == nil, "a device is an identifier, not text")
        #expect(try message(#"{"id":1,"op":"save_secret","title":"🎂\u200d🔥","description":"d","points":25}"#) == nil)
    }
}

