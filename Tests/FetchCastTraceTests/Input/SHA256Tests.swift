import Testing
import FetchCastTrace
import FetchCastTestSupport

struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func matchesPublishedVectors(message: String, digest: String) {
        #expect(SHA256.hex(of: Array(message.utf8)) == digest)
    }

    /// Messages of `count` times "a" around the padding boundaries (55/56 and 64 bytes), from `sha256sum`.
    @Test(arguments: [
        (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
        (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
        (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
        (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
    ])
    func padsAtBlockBoundaries(count: Int, digest: String) {
        #expect(SHA256.hex(of: [UInt8](repeating: UInt8(ascii: "a"), count: count)) == digest)
    }

    /// 1 MiB of `i * 31 % 251`; digest from
    /// `python3 -c "…bytes(i*31 % 251 for i in range(1<<20))" | sha256sum`.
    static let megabyte: [UInt8] = (0..<(1 << 20)).map { UInt8($0 * 31 % 251) }
    static let megabyteDigest = "3617860390ce98fe34c1bb89382ea7122d3b6890069e30a078892492ba0c774d"

    @Test func hashesAMegabyteInOneCall() {
        #expect(SHA256.hex(of: Self.megabyte) == Self.megabyteDigest)
    }

    @Test(arguments: [1, 7, 63, 64, 65, 1000, 262_144])
    func hashesTheSameInAnyChunking(chunk: Int) {
        var hasher = SHA256()
        Self.megabyte.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let n = min(chunk, all.count - offset)
                hasher.update(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + n)]))
                offset += n
            }
        }
        #expect(hasher.hexDigest() == Self.megabyteDigest)
    }

    @Test func digestDoesNotEndTheStream() {
        var hasher = SHA256()
        hasher.update(Array("ab".utf8))
        _ = hasher.hexDigest()
        hasher.update(Array("c".utf8))
        #expect(hasher.hexDigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hashesAFileLikeSha256sum() throws {
        let dir = try TemporaryDirectory()
        let path = try dir.write("m.bin", bytes: Self.megabyte)
        #expect(try RawInput.sha256(ofFile: path) == Self.megabyteDigest)
    }
}
