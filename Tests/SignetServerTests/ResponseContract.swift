import Foundation
import HTTPTypes
import SignetAPI
import SignetClient
import SignetTLS
import Testing

/// Holds every answer a live-server test receives through ``TestAPI`` to the wire contract
/// (SignetAPI, and so `docs/api/openapi.yaml`, which the suite holds to SignetAPI): a status the
/// operation documents, a body of its type, and problem documents per RFC 9457 — so a new
/// route or answer is checked without anyone remembering to.
enum ResponseContract {
    /// Records an issue for each way `response` breaks the contract for `request`.
    static func check(_ request: HTTPRequest, _ response: HTTPSResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        check(request, response.head, response.body, sourceLocation: sourceLocation)
    }

    /// The same for a response's head and body; `streamed`: the body went to a sink (a resource
    /// download), so only the head is checked.
    static func check(
        _ request: HTTPRequest, _ head: HTTPResponse, _ body: [UInt8], streamed: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let status = head.status.code
        let path = String((request.path ?? "/").split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        let line = "\(request.method) \(request.path ?? "/") → \(status)"
        if status >= 400 { checkProblem(head, body, line, sourceLocation: sourceLocation) }
        guard let operation = APIOperation.matching(method: request.method, path: path) else {
            // Outside the API: only the router's refusals (no such path, a method it does not
            // take, a request it could not parse).
            #expect([400, 404, 408, 413, 503].contains(status), "\(line): a path outside the API", sourceLocation: sourceLocation)
            return
        }
        #expect(operation.statuses.contains(status), "\(line): \(operation) does not document \(status)", sourceLocation: sourceLocation)
        guard operation.successStatuses.contains(status), !streamed else { return }
        do {
            try checkBody(operation, status: status, head, body)
        } catch {
            Issue.record("\(line): the body is not \(operation)'s: \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A refusal is an RFC 9457 problem document of a known code, whose status it states.
    static func checkProblem(_ head: HTTPResponse, _ body: [UInt8], _ line: String, sourceLocation: SourceLocation) {
        let status = head.status.code
        #expect(head.headerFields[.contentType] == ProblemDocument.mediaType, "\(line): not a problem document", sourceLocation: sourceLocation)
        guard let document = try? JSONDecoder().decode(ProblemDocument.self, from: Data(body)) else {
            Issue.record("\(line): the body is not a problem document: \(String(decoding: body.prefix(200), as: UTF8.self))", sourceLocation: sourceLocation)
            return
        }
        guard let code = document.problemCode else {
            Issue.record("\(line): \(document.code) is not a ProblemCode", sourceLocation: sourceLocation)
            return
        }
        #expect(code.status == status && document.status == status, "\(line): \(document.code) is a \(code.status)", sourceLocation: sourceLocation)
        #expect(document.type == code.type && document.title == code.title && !document.detail.isEmpty, "\(line): \(document)", sourceLocation: sourceLocation)
        if code == .rateLimited || code == .overloaded {
            #expect(head.headerFields[.retryAfter] != nil, "\(line): no Retry-After", sourceLocation: sourceLocation)
        }
        if code == .sessionEnded {
            #expect(head.headerFields[.wwwAuthenticate] == "Bearer", "\(line): no WWW-Authenticate", sourceLocation: sourceLocation)
        }
    }

    /// A success's body decodes as its operation's type (empty for 204 and 304).
    static func checkBody(_ operation: APIOperation, status: Int, _ head: HTTPResponse, _ bytes: [UInt8]) throws {
        let body = Data(bytes)
        func decode<T: Decodable>(_ type: T.Type) throws { _ = try JSONDecoder().decode(T.self, from: body) }
        if status == 204 || status == 304 {
            guard body.isEmpty else { throw ContractError("a \(status) with a body") }
            return
        }
        switch operation {
        case .health: try decode([String: String].self)
        case .register, .me: try decode(UserAPI.Profile.self)
        case .signIn: try decode(UserAPI.Session.self)
        case .signOutEverywhere, .revokeUserSessions: try decode(UserAPI.Revoked.self)
        case .enrolApp, .enrolAdmin, .setAppAttestation: try decode(AdminAPI.Enrolled.self)
        case .createDeviceChallenge: try decode(DeviceAPI.Challenge.self)
        case .enrolDevice: try decode(DeviceAPI.Device.self)
        case .listDevices: try decode(DeviceAPI.DeviceList.self)
        case .listApps, .listAdmins: try decode(AdminAPI.EnrolledList.self)
        case .listUsers: try decode(AdminAPI.UserList.self)
        case .publishResource: try decode(ResourceRecord.self)
        case .listResources: try decode(ResourceAPI.List.self)
        case .trustChain: try decode(ResourceAPI.TrustChain.self)
        case .rotateTrust: try decode(ResourceAPI.TrustRotated.self)
        case .getResource, .getResourceVersion:
            guard head.headerFields[.contentType] == ResourceAPI.bundleType, head.headerFields[.eTag] != nil else {
                throw ContractError("a resource answer without its media type or ETag")
            }
        case .signOut, .revokeApp, .revokeAdmin, .disableUser, .revokeDevice:
            throw ContractError("a \(status) where only 204 is documented")
        }
    }

    struct ContractError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

}

/// A transport that holds every answer it carries to the wire contract (the client library's
/// calls in the live-server tests go through it).
struct ContractCheckingTransport: ClientTransport {
    let inner: any ClientTransport

    func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        let (head, responseBody) = try await inner.send(request, body: body)
        ResponseContract.check(request, head, responseBody)
        return (head, responseBody)
    }

    func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8]) {
        let (head, responseBody) = try await inner.download(request, to: sink)
        ResponseContract.check(request, head, responseBody, streamed: responseBody.isEmpty)
        return (head, responseBody)
    }

    func with(timeout: Duration) -> any ClientTransport { ContractCheckingTransport(inner: inner.with(timeout: timeout)) }
}
