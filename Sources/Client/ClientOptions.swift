/// Tuning for a `GameClient`.
public struct ClientOptions: Sendable {
    /// How long `request` waits for a reply by default, reconnects included.
    public var requestTimeout: Double = 30
    /// The first wait for a connection and the server's `hello`; each later try waits twice as
    /// long as the one before (see `connectWait`).
    public var connectTimeoutMilliseconds = 3000
    /// Reconnect after a lost connection (with backoff), sign in again, resubscribe, re-send.
    public var reconnect = true
    /// The first pause before a reconnect attempt; it doubles up to `maxBackoff` (seconds).
    public var initialBackoff: Double = 0.05
    public var maxBackoff: Double = 2
    /// Seconds without a line from the server before the client pings it, to learn that the
    /// connection still works: a server restarted while this machine slept, or a network that
    /// dropped the connection without a word, never says so, and the screen would stay as it was.
    public var silenceBeforeProbe: Double = 30
    /// Seconds that ping may go without any line back before the connection is taken for lost
    /// and replaced (reconnect, sign in, resubscribe, re-send), as a closed one is. Also how
    /// long any request may go without its reply while the server's pushes keep coming: a
    /// server that no longer hears this client may still be heard.
    public var probeTimeout: Double = 15

    public init() {}

    /// How long the `attempt`th try (from 0) of a connect waits for the connection and the
    /// server's `hello`: `connectTimeoutMilliseconds`, doubling with each try up to the request
    /// timeout, so that a network slower than the first wait (a congested hotspot) still gets
    /// through. A reconnect's tries stop doubling sooner: each starts afresh, and a network back
    /// while a long try waits on a connection lost in the outage would be noticed only once that
    /// try gave up. Their cap is twice the first wait, twice `slowestHandshake` (the longest
    /// connect and `hello` that has succeeded, in milliseconds), or a quarter of the time the
    /// connection has been lost (`offline`, milliseconds), whichever is longest: a network back
    /// after an outage is found within about a quarter of the outage, and one that has become
    /// slower than every try so far still gets through, once the tries have grown to it.
    public func connectWait(attempt: Int, reconnectingAfter slowestHandshake: Int? = nil, offline: Int = 0) -> Int {
        let ceiling = max(connectTimeoutMilliseconds, Int(requestTimeout * 1000))
        let doubled = min(connectTimeoutMilliseconds << min(attempt, 10), ceiling)
        guard let slowestHandshake else { return doubled }
        return min(doubled, max(2 * connectTimeoutMilliseconds, 2 * slowestHandshake, offline / 4))
    }
}
