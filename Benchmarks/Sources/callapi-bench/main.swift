import Dispatch

// A synchronous entry point rather than `@main` on an async command: Swift's async entry point on Linux parks the
// main thread in `dispatch_main()`, and valgrind (3.19 and 3.24 alike) crashes as soon as such a program starts its
// first thread, so `callapi-bench serve` could not be counted by callgrind (scripts/callgrind_relay.sh). Here the
// command runs as a detached task on the global executor while the main thread waits (a plain `Task` would inherit
// top-level code's main actor, whose queue nothing drains); nothing in the benches uses the main actor.
let finished = DispatchSemaphore(value: 0)
Task.detached {
    await BenchCommand.main()
    finished.signal()
}
finished.wait()
