import Foundation

/// Who may reach the data folder: its owner alone.
extension ServerDataFolder {
    /// Refuses a data folder that its group or others may write (they could swap the database,
    /// the vault or the certificate), or that belongs to another user than the server's (nor
    /// root), as ssh refuses such a home folder. A folder that does not exist yet passes: it is
    /// made 0700.
    package func checkAccess() throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw ServerError.configuration(detail: "\(path): cannot use the data folder: \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw ServerError.configuration(detail: "\(path): not a folder") }
        let user = geteuid()
        guard info.st_uid == user || info.st_uid == 0 else {
            throw ServerError.configuration(detail: """
                \(path): the data folder belongs to another user (uid \(info.st_uid)) than the one the server runs as \
                (uid \(user)); run the server as the folder's owner, or give it a folder of its own
                """)
        }
        // The vault's key file unlocks every key: held to what ssh holds a private key to (one
        // inside the folder is narrowed at start instead).
        if !vaultKeyFile.hasPrefix(path + "/") {
            try FileAccess.checkPrivate(vaultKeyFile, holding: "the key that unlocks the server's vault")
        }
        guard (info.st_mode & 0o022) == 0 else {
            throw ServerError.configuration(detail: """
                \(path): the data folder can be written by its group or by others (mode \(FileAccess.octal(info.st_mode))), \
                who could replace its database or keys, so the server does not use it; check what is in it and make it \
                private with `chmod 700 \(path)`
                """)
        }
    }

    /// Narrows the folder to 0700 and each file or folder directly in it to 0600 or 0700
    /// (``FileAccess/restrict(_:)``): what older servers, or SQLite under a wide umask, made
    /// readable by others is closed at start. Uploads' folders inside `work/` are the server's
    /// own making (0700) and are not walked; a vault key file kept elsewhere (often on storage
    /// the server may not change) is left as it is.
    package func restrictAccess() throws {
        try FileAccess.restrict(path)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw ServerError.configuration(detail: "\(path): cannot list the data folder: \(error.localizedDescription)")
        }
        for name in names { try FileAccess.restrict(path + "/" + name) }
    }

    /// Opens `DIR/.lock` and takes its exclusive lock, waiting for another process that holds
    /// it; the caller closes the descriptor to let go.
    func acquireLock() throws -> Int32 {
        let lockPath = path + "/.lock"
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, FileAccess.privateFile)
        guard lock >= 0 else { throw ServerError.configuration(detail: "\(lockPath): \(String(cString: strerror(errno)))") }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let message = String(cString: strerror(errno))
                close(lock)
                throw ServerError.configuration(detail: "\(lockPath): \(message)")
            }
        }
        return lock
    }
}
