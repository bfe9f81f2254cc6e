import SignetCore
import Testing

/// Checks that `error` has the code `expected` and that its message mentions every fragment.
public func expectError<E: SignetError>(
    _ error: E, is expected: SignetErrorCode<E>, mentioning fragments: [String], sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(error.code == expected, "got \(error.code): \(error)", sourceLocation: sourceLocation)
    for fragment in fragments {
        #expect(error.description.contains(fragment), "\"\(error.description)\" does not mention \"\(fragment)\"", sourceLocation: sourceLocation)
    }
}

/// Checks a module's codes: one per case (`samples` holds one error of each case with the
/// case's name), each named `domain.name`, and no message naming a command-line flag.
public func expectStableCodes<E: SignetError>(_ samples: [(E, String)], domain: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(Set(samples.map { $0.0.code }).count == samples.count, "two cases share a code", sourceLocation: sourceLocation)
    #expect(E.codeDomain == domain, sourceLocation: sourceLocation)
    for (error, name) in samples {
        #expect(error.code.name == name, sourceLocation: sourceLocation)
        #expect(error.codeName == domain + "." + name, sourceLocation: sourceLocation)
        #expect(!error.description.contains("--"), "a library message names a flag: \(error.description)", sourceLocation: sourceLocation)
    }
}
