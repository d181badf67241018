import Dispatch
import LinkOutCore

extension NotificationVerifier {
    /// The signatures of a screened notification, on a plain thread that may wait: a chain whose verdict is
    /// cached needs no chain building, so no task; swift-certificates' chain building is async, so it is
    /// waited for here. `chainChecked`: a chain's signatures were checked (not answered from the cache).
    func verifyWaiting(_ screened: ScreenedNotification) -> (result: Result<VerifiedNotification, NotificationRefusal>, chainChecked: Bool)
    {
        do throws(NotificationRefusal) {
            if let verified = try verifyKnownChain(screened) { return (.success(verified), false) }
        } catch {
            return (.failure(error), false)
        }
        final class Box: @unchecked Sendable { var result: Result<VerifiedNotification, NotificationRefusal>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(NotificationRefusal) {
                box.result = .success(try await verify(screened))
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return (box.result!, true)
    }
}
