// `callapi-allocs`: allocations per full call of the CallAPI state machine, counted by ordo-one's malloc
// interposer. The interposer only sees allocations when its library is preloaded, so on Linux the program
// starts itself again with LD_PRELOAD set to the library built next to it.
import CallAPIMachineBench
import Foundation
import MallocInterposerSwift

#if canImport(Glibc)
    import Glibc
#endif

let interposer = "libMallocInterposerSwift.so"

func preloadedOrRestarted() -> Bool {
    let environment = ProcessInfo.processInfo.environment
    if environment["LD_PRELOAD"]?.contains(interposer) == true { return true }
    #if canImport(Glibc)
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let library = executable.deletingLastPathComponent().appendingPathComponent(interposer).path
        guard FileManager.default.fileExists(atPath: library) else {
            FileHandle.standardError.write(
                Data("callapi-allocs: \(library) not found (build the product first)\n".utf8))
            exit(2)
        }
        setenv("LD_PRELOAD", library, 1)
        let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(executable.path, arguments)
        FileHandle.standardError.write(Data("callapi-allocs: could not restart with LD_PRELOAD\n".utf8))
        exit(2)
    #else
        return false
    #endif
}

var calls = 20_000
if let index = CommandLine.arguments.firstIndex(of: "--calls"), index + 1 < CommandLine.arguments.count {
    guard let value = Int(CommandLine.arguments[index + 1]), value > 0, value <= 10_000_000 else {
        FileHandle.standardError.write(Data("callapi-allocs: --calls takes 1...10000000\n".utf8))
        exit(2)
    }
    calls = value
}
guard preloadedOrRestarted() else {
    FileHandle.standardError.write(
        Data("callapi-allocs: preload \(interposer) (DYLD_INSERT_LIBRARIES on macOS) to count allocations\n".utf8))
    exit(2)
}

MallocInterposerSwift.initialize()
_ = MachineBench(settings: .init(calls: 1_000)).run()  // warm-up: caches and lazily made globals
MallocInterposerSwift.hook()
let report = MachineBench(settings: .init(calls: calls)).run()
MallocInterposerSwift.unhook()
let stats = MallocInterposerSwift.getStatistics()

guard stats.mallocCount > 0 else {
    FileHandle.standardError.write(
        Data("callapi-allocs: the interposer counted no allocations (a sanitizer build replaces malloc itself)\n".utf8))
    exit(3)
}
let perCall = Double(stats.mallocCount) / Double(calls)
let bytesPerCall = Double(stats.mallocBytesCount) / Double(calls)
print("### State machine alone: allocations per full call (two machines, the driver's message encoding included)")
print("")
print("| calls | failed | mallocs/call | bytes/call | frees/call |")
print("|-------|--------|--------------|------------|------------|")
print(
    "| \(calls) | \(report.failedCalls) | \(String(format: "%.1f", perCall)) | \(String(format: "%.0f", bytesPerCall)) | "
        + "\(String(format: "%.1f", Double(stats.freeCount) / Double(calls))) |")
print(
    #"{"bench":"allocations","bytesPerCall":\#(Int(bytesPerCall.rounded())),"calls":\#(calls),"failed":\#(report.failedCalls),"mallocsPerCall":\#((perCall * 10).rounded() / 10)}"#
)
