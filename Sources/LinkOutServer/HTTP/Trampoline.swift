/// The one place Swift objects cross C callbacks (libevent's `void *arg`), as NIO's llhttp bridge does:
/// the owner keeps the object alive for as long as the C side may call back with it, so the pointer is
/// unretained, and every callback turns it back here.
enum Trampoline {
    static func argument(_ object: AnyObject) -> UnsafeMutableRawPointer {
        Unmanaged.passUnretained(object).toOpaque()
    }

    static func object<Object: AnyObject>(_ argument: UnsafeMutableRawPointer?, as type: Object.Type = Object.self) -> Object? {
        guard let argument else { return nil }
        return Unmanaged<Object>.fromOpaque(argument).takeUnretainedValue()
    }
}
