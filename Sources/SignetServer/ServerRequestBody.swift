import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Reads a request's JSON body (``decode(_:bytes:)`` is the part after reading, for fuzzing): `application/json` only (415), within the size limit (413),
/// valid UTF-8 JSON (400), of the endpoint's shape (422 naming the field).
package enum ServerRequestBody {
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int) async throws -> T {
        let contentType = request.headers[.contentType] ?? ""
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard mediaType == "application/json" else { throw ServerError.unsupportedMediaType(contentType: String(contentType.prefix(100))) }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw ServerError.payloadTooLarge(limit: limit)
        }
        return try decode(T.self, bytes: Data(buffer.readableBytesView))
    }

    /// Decodes a body already read: valid UTF-8 JSON (400) of the endpoint's shape (422).
    package static func decode<T: Decodable>(_ type: T.Type, bytes: Data) throws -> T {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw ServerError.badRequest(detail: "the body is not valid UTF-8") }
        do {
            return try JSONDecoder().decode(T.self, from: bytes)
        } catch let error as DecodingError {
            throw describe(error)
        } catch {
            throw ServerError.badRequest(detail: "the body is not JSON")
        }
    }

    static func describe(_ error: DecodingError) -> ServerError {
        func path(_ context: DecodingError.Context) -> String {
            let names = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return names.isEmpty ? "the body" : names.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return .badRequest(detail: "the body is not JSON")
        case .dataCorrupted(let context):
            return .unprocessable(field: path(context), detail: "not a valid value")
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return .unprocessable(field: parent == "the body" ? key.stringValue : parent + "." + key.stringValue, detail: "is required")
        case .typeMismatch(let type, let context):
            return .unprocessable(field: path(context), detail: "must be \(jsonName(of: type))")
        case .valueNotFound(let type, let context):
            return .unprocessable(field: path(context), detail: "must be \(jsonName(of: type)), not null")
        @unknown default:
            return .badRequest(detail: "the body does not have the expected shape")
        }
    }

    static func jsonName(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int64.Type, is Double.Type: return "a number"
        default: return "an object"
        }
    }
}
