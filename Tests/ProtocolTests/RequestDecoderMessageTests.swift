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
        // Of several links, the one refused is pointed out.
        #expect(try message(#"{"id":1,"op":"save_reward","from":"f","title":"t","teaser":"t","type":"text","content":{"urls":["https://a.example/x","not a url"]}}"#)?
                .hasSuffix(#"; link 2 is not: "not a url""#) == true)
    }

    /// The field a message names for people is the error's `field` for programs, whatever the
    /// problem: missing, of the wrong type, out of range, blank, nested.
    @Test(arguments: [
        (#"{"id":1,"op":"unlock_reward"}"#, "reward"),
        (#"{"id":1,"op":"unlock_reward","reward":7}"#, "reward"),
        (#"{"id":1,"op":"adjust_points","delta":0,"reason":"r"}"#, "delta"),
        (#"{"id":1,"op":"adjust_points","delta":1.5,"reason":"r"}"#, "delta"),
        (#"{"id":1,"op":"force_unlock","reward":"r01"}"#, "deduct"),
        (#"{"id":1,"op":"complete_challenge","challenge":"c01","proof":{"kind":"text"}}"#, "proof.text"),
        (#"{"id":1,"op":"complete_challenge","challenge":"c01","proof":{"kind":"done"},"option":"c"}"#, "option"),
        (#"{"id":1,"op":"save_reward","from":"f","title":"t","teaser":"t","type":"text","content":{"urls":"x"}}"#, "content.urls"),
        (#"{"id":1.5,"op":"ping"}"#, "id"),
        (#"{"id":1,"op":7}"#, "op"),
    ])
    func theNamedFieldIsGivenApart(line: String, field: String) throws {
        let json = try JSONParser.parse(Array(line.utf8))
        guard case .failure(let failure) = RequestDecoder.decode(json) else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(failure.error.field == field, "\(failure.error.message)")
        #expect(failure.error.message.contains("`\(field)`"), "\(failure.error.message)")
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

