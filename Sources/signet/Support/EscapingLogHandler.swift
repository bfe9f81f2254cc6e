import Logging
import SignetCore

/// The server's log lines with every control character of their message and metadata escaped
/// (`PrintableText.terminalSafe`): a log line may carry what came from outside — an operator's
/// paths, a dependency's error, and whatever a client sent that a future line logs — which must
/// neither drive the terminal that shows the log nor forge a line of it.
struct EscapingLogHandler: LogHandler {
    var inner: any LogHandler

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: PrintableText.terminalSafe(event.message.description))
        event.metadata = event.metadata.map { Self.escaped($0) }
        inner.log(event: event)
    }

    static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        Dictionary(uniqueKeysWithValues: metadata.map { (PrintableText.terminalSafe($0.key), escaped($0.value)) })
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): return .string(PrintableText.terminalSafe(text))
        case .stringConvertible(let convertible): return .string(PrintableText.terminalSafe(convertible.description))
        case .dictionary(let dictionary): return .dictionary(escaped(dictionary))
        case .array(let array): return .array(array.map(escaped))
        }
    }
}
