import Foundation

/// The signals `serve` handles, and the one thread that waits for them: SIGTERM and SIGINT drain and
/// stop, SIGHUP reloads. Blocked in every other thread, so none of them is killed by a default action.
enum HandledSignals {
    private static var set: sigset_t {
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        sigaddset(&mask, SIGINT)
        sigaddset(&mask, SIGHUP)
        return mask
    }

    /// Blocks them in the calling thread, and so in every thread started after it: call it before anything
    /// starts a thread (opening the store starts the checkpointer), or a signal may land in a thread that
    /// does not wait for it and kill the process with its default action. Writes to a socket the client
    /// already closed must fail with EPIPE, not kill the process: SIGPIPE is ignored.
    static func block() {
        signal(SIGPIPE, SIG_IGN)
        var mask = set
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }

    /// Waits until SIGTERM or SIGINT, calling `reload` on each SIGHUP meanwhile; returns the signal's name.
    static func waitForStop(reload: () -> Void) -> String {
        var mask = set
        var received: Int32 = 0
        while true {
            sigwait(&mask, &received)
            guard received == SIGHUP else { break }
            reload()
        }
        return received == SIGTERM ? "SIGTERM" : "SIGINT"
    }
}
