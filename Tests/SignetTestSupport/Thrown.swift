import Testing

/// Runs `body`, requires it to throw an error of type `E` (recording an issue otherwise) and returns that error.
public func thrown<E: Error, R>(
    _ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) throws -> E {
    try #require(throws: E.self, sourceLocation: sourceLocation) { try body() }
}

/// Runs the asynchronous `body`, requires it to throw an error of type `E` (recording an issue otherwise) and returns that error.
public func thrownAsync<E: Error, R>(
    _ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> R
) async throws -> E {
    try await #require(throws: E.self, sourceLocation: sourceLocation) { try await body() }
}
