/// One part of the running server with a life of its own (a thread, a listener, a queue): a name for the
/// operator's messages, how it starts and how it stops. Each part says so beside its own type.
protocol ServerPart: AnyObject {
    var partName: String { get }
    func start() throws
    func stop()
}
