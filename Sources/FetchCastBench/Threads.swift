#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body(i)` for `i` in `0..<count` on `count` threads at once and waits for them all.
enum Threads {
    final class Box: Sendable {
        let body: @Sendable (Int) -> Void
        let index: Int
        init(body: @escaping @Sendable (Int) -> Void, index: Int) {
            self.body = body
            self.index = index
        }
    }

    static func run(count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        var threads: [pthread_t] = []
        for i in 0..<count {
            let box = Unmanaged.passRetained(Box(body: body, index: i)).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(&thread, nil, { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body(box.index)
                return nil
            }, box)
            if rc == 0 { threads.append(thread) } else { body(i) }
        }
        for thread in threads { pthread_join(thread, nil) }
    }
}
