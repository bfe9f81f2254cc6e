import SignetServer
import Testing

/// `ResourceAnswer.decide`: what a GET of a stored resource gets from its `If-None-Match`,
/// `Range` and `If-Range` fields.
@Suite struct ResourceRangeTests {
    struct Request: Sendable, CustomStringConvertible {
        var ifNoneMatch: String? = nil
        var range: String? = nil
        var ifRange: String? = nil
        var size: Int64 = 100
        var answer: ResourceAnswer
        var description: String { "If-None-Match \(ifNoneMatch ?? "-"), Range \(range ?? "-"), If-Range \(ifRange ?? "-"), size \(size)" }
    }

    static let etag = "\"5d41402abc4b2a76\""

    static let requests: [Request] = [
        Request(answer: .full),
        Request(ifNoneMatch: etag, answer: .notModified),
        Request(ifNoneMatch: "\"other\", \(etag)", answer: .notModified),
        Request(ifNoneMatch: "W/\(etag)", answer: .notModified),
        Request(ifNoneMatch: "*", answer: .notModified),
        Request(ifNoneMatch: "\"other\"", answer: .full),
        Request(ifNoneMatch: etag, range: "bytes=0-9", answer: .notModified),
        Request(ifNoneMatch: "\"other\"", range: "bytes=0-9", answer: .partial(0...9)),
        Request(range: "bytes=0-9", answer: .partial(0...9)),
        Request(range: "bytes=99-99", answer: .partial(99...99)),
        Request(range: "bytes=50-1000", answer: .partial(50...99)),
        Request(range: "bytes=10-", answer: .partial(10...99)),
        Request(range: "bytes=-10", answer: .partial(90...99)),
        Request(range: "bytes=-1000", answer: .partial(0...99)),
        Request(range: "bytes=100-", answer: .unsatisfiable),
        Request(range: "bytes=100-200", answer: .unsatisfiable),
        Request(range: "bytes=-0", answer: .unsatisfiable),
        Request(range: "bytes=0-1,5-6", answer: .full),
        Request(range: "bytes=9-3", answer: .full),
        Request(range: "bytes=abc", answer: .full),
        Request(range: "bytes=", answer: .full),
        Request(range: "bytes=-", answer: .full),
        Request(range: "bytes=1-2-3", answer: .full),
        Request(range: "items=0-9", answer: .full),
        Request(range: "0-9", answer: .full),
        Request(range: "bytes=0-9", ifRange: "\"other\"", answer: .full),
        Request(range: "bytes=0-9", ifRange: "W/\(etag)", answer: .full),
        Request(range: "bytes=0-9", ifRange: etag, answer: .partial(0...9)),
        Request(ifRange: etag, answer: .full),
        Request(range: "bytes=0-0", size: 1, answer: .partial(0...0)),
        Request(size: 0, answer: .full),
        Request(ifNoneMatch: etag, size: 0, answer: .notModified),
        Request(range: "bytes=0-", size: 0, answer: .unsatisfiable),
        Request(range: "bytes=-5", size: 0, answer: .unsatisfiable),
    ]

    @Test(arguments: requests)
    func resourceAnswer(_ request: Request) {
        let answer = ResourceAnswer.decide(
            etag: Self.etag, size: request.size, ifNoneMatch: request.ifNoneMatch, range: request.range, ifRange: request.ifRange)
        #expect(answer == request.answer)
    }
}
