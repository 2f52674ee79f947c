import Foundation
import JSON
import POSIXSupport
import Server
import Testing

/// docs/configuration.md and config/server.json must not drift from the settings the server
/// really reads: every setting is documented, and the shipped file is one the loader accepts.
@Suite struct ConfigDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everySettingIsDocumentedWithItsEnvironmentVariable() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        for setting in ConfigLoader.settings {
            #expect(doc.contains("| `\(setting.key)` | `\(setting.environment)`"), "docs/configuration.md lacks \(setting.key)")
        }
    }

    @Test func theShippedConfigFileLoadsAndUnknownKeysAreRefused() throws {
        let path = Self.root.appendingPathComponent("config/server.json").path
        let json = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        var config = ServerConfig()
        try ConfigLoader.apply(file: json, path: path, to: &config)
        // Naming the seed is the one difference: run where the file sits beside it, the shipped
        // seed is there, and one missing is said rather than replaced by the built-in copy.
        #expect(config.seedIsNamed)
        config.seedIsNamed = false
        #expect(config == ServerConfig(), "the file spells out the defaults, and nothing else")
        // Every setting but the admin key, which is a secret and belongs elsewhere.
        let keys = Set(json.objectValue?.keys.map { $0 } ?? [])
        #expect(keys == Set(ConfigLoader.settings.map(\.key)).subtracting(["admin_key"]))
        var other = ServerConfig()
        #expect(throws: ConfigError.self) { try ConfigLoader.apply(file: ["prot": 1], path: "x.json", to: &other) }
        #expect(throws: ConfigError.self) { try ConfigLoader.apply(environment: ["BQ_PORT": "many"], to: &other) }
    }

    /// Naming a default game alone holds that game alone: not also an unplayed `main`, whose
    /// free organizer could read the seed's gifts. An empty `BQ_GAMES` says none over a file.
    @Test func aDefaultGameAloneIsTheOnlyGameHeld() throws {
        var config = ServerConfig()
        try ConfigLoader.apply(environment: ["BQ_DEFAULT_GAME": "city"], to: &config)
        #expect(config.games.isEmpty && config.defaultGame == "city")
        var listed = ServerConfig()
        try ConfigLoader.apply(file: ["games": ["lake", "hill"]], path: "x.json", to: &listed)
        try ConfigLoader.apply(environment: ["BQ_GAMES": ""], to: &listed)
        #expect(listed.games.isEmpty)
    }

    /// An IPv6 address may be written as in a URL; said back the same way.
    @Test func aBracketedIPv6HostIsTheAddressInside() throws {
        var config = ServerConfig()
        try ConfigLoader.apply(flags: ["host": "[::1]"], to: &config)
        #expect(config.host == "::1")
        #expect(ServerConfig.addressText(host: config.host, port: 4747) == "[::1]:4747")
        #expect(ServerConfig.addressText(host: "127.0.0.1", port: 4747) == "127.0.0.1:4747")
        // And a client (`bq play --host`) takes the address as the server said it.
        #expect(Int32(try socketAddress(host: "[::1]", port: 4747).ss_family) == AF_INET6)
    }

    /// The environment has only text: a text setting takes digits as they are written (a game
    /// "007", an admin key with leading zeros), and only a number setting reads them as one.
    @Test func digitsInTheEnvironmentStayTextForTextSettings() throws {
        var config = ServerConfig()
        try ConfigLoader.apply(environment: ["BQ_GAMES": "007", "BQ_DEFAULT_GAME": "+5", "BQ_ADMIN_KEY": "00123456789012345678",
                                             "BQ_DATA": "0042", "BQ_PORT": "4748", "BQ_CLAIMS_NEED_PIN": "1"], to: &config)
        #expect(config.games == ["007"])
        #expect(config.defaultGame == "+5")
        #expect(config.adminKey == "00123456789012345678")
        #expect(config.dataDirectory == "0042")
        #expect(config.port == 4748)
        #expect(config.claimsNeedPIN)
        // A config file says what type it means: a number is no name.
        var other = ServerConfig()
        #expect(throws: ConfigError.self) { try ConfigLoader.apply(file: ["default_game": 2026], path: "x.json", to: &other) }
    }
}
