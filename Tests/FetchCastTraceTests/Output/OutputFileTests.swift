import FetchCastTestSupport
import FetchCastTrace
import Foundation
import Testing

struct OutputFileTests {
    private func text(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    /// What the folder holds besides the files named (no temporary file is left behind).
    private func others(in folder: String, besides names: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { !names.contains($0) }
    }

    @Test func refusesAnInputHoweverItIsNamed() throws {
        let dir = try TemporaryDirectory()
        let input = try dir.write("in.csv", "time,device,app,event\n")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link.csv", withDestinationPath: input)
        try FileManager.default.createDirectory(atPath: dir.path + "/sub", withIntermediateDirectories: true)
        let protected = ProtectedFiles(inputs: [input])
        for name in [input, dir.path + "/link.csv", dir.path + "/sub/../in.csv", dir.path + "//in.csv"] {
            let error = #expect(throws: OutputError.self, "\(name)") { try OutputFile(path: name, protecting: protected) }
            #expect(error?.description.contains("is an input") == true, "\(String(describing: error))")
        }
        #expect(try text(input) == "time,device,app,event\n")
        #expect(try others(in: dir.path, besides: ["in.csv", "link.csv", "sub"]) == [])
    }

    @Test func refusesTheStoreAndItsLogFilesEvenBeforeTheyExist() throws {
        let dir = try TemporaryDirectory()
        let store = dir.path + "/s.sqlite"
        let protected = ProtectedFiles(store: store)
        // Not created yet: compared by folder and name.
        for name in [store, store + "-wal", dir.path + "/./s.sqlite-shm"] {
            #expect(throws: OutputError.self, "\(name)") { try OutputFile(path: name, protecting: protected) }
        }
        try dir.write("s.sqlite", "SQLite format 3")
        let error = #expect(throws: OutputError.self) { try OutputFile(path: store, protecting: protected) }
        #expect(error?.description == "\(store): is the store; writing there would destroy it, so name another output file")
        #expect(try text(store) == "SQLite format 3")
    }

    @Test func refusesADirectory() throws {
        let dir = try TemporaryDirectory()
        let error = #expect(throws: OutputError.self) { try OutputFile(path: dir.path) }
        #expect(error?.reason.contains("is a directory") == true)
    }

    @Test func replacesTheFileOnlyOnCommit() throws {
        let dir = try TemporaryDirectory()
        let target = try dir.write("out.csv", "old\n")
        do {
            let file = try OutputFile(path: target)
            file.write("new\n")
            // Nothing reaches the target before the commit.
            #expect(try text(target) == "old\n")
            try file.commit()
        }
        #expect(try text(target) == "new\n")
        do {
            let file = try OutputFile(path: target)
            file.write("abandoned\n")
            // Released without a commit (an error): the old file stays whole.
        }
        #expect(try text(target) == "new\n")
        #expect(try others(in: dir.path, besides: ["out.csv"]) == [])
    }

    @Test func replacesTheFileALinkPointsToAndKeepsItsPermissions() throws {
        let dir = try TemporaryDirectory()
        let target = try dir.write("real.csv", "old\n")
        chmod(target, 0o640)
        let link = dir.path + "/link.csv"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let file = try OutputFile(path: link)
        file.write("new\n")
        try file.commit()
        #expect(try text(target) == "new\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int
        #expect(mode == 0o640)
    }

    @Test func writesADeviceInPlace() throws {
        let file = try OutputFile(path: "/dev/null")
        file.write("discarded\n")
        try file.commit()
        var st = stat()
        #expect(stat("/dev/null", &st) == 0)
        #expect((st.st_mode & S_IFMT) == S_IFCHR)
    }

    @Test func namesAFolderItCannotWriteIn() throws {
        let dir = try TemporaryDirectory()
        let error = #expect(throws: OutputError.self) { try OutputFile(path: dir.path + "/missing/out.csv") }
        #expect(error?.description.contains("cannot create a file in \(dir.path)/missing") == true, "\(String(describing: error))")
    }
}
