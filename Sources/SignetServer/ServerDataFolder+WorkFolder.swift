import Foundation

/// Where uploads are unpacked and bundles built: one folder per running server under
/// `DIR/work/`, and what interrupted publishes left there removed at the next start.
extension ServerDataFolder {
    /// The folder holding every server's work folder.
    package var workPath: String { path + "/work" }

    /// The prefix of a server's work folder: `node-PID-XXXXXX` (the process id is for people
    /// reading the folder; the lock decides).
    static let workFolderPrefix = "node-"

    /// Makes this process's work folder, `DIR/work/node-PID-XXXXXX` (0700), for
    /// ``ServerConfiguration/workFolder``, after removing those of servers that are gone: what a
    /// publish cut by `kill -9`, a crash or a power loss left behind (up to the largest upload).
    ///
    /// A server holds an exclusive `flock` on its work folder's `.lock` for as long as it runs
    /// (the descriptor is never closed: the kernel lets go when the process ends, however it
    /// ends), so a folder whose lock can be taken belongs to no running server. That holds for
    /// nodes sharing the data folder on one machine, in containers beside each other, and
    /// across machines on a file system whose `flock` works between them (which sharing the
    /// folder's keys needs anyway); a process id alone would not do, since ids are reused and
    /// differ between containers. It runs under the data folder's lock, so a folder being made
    /// is never taken for a leftover.
    public func openWorkFolder() throws -> String {
        let lock = try acquireLock()
        defer { close(lock) }
        let work = workPath
        guard mkdir(work, FileAccess.privateFolder) == 0 || errno == EEXIST else {
            throw ServerError.configuration(detail: "\(work): cannot create the work folder: \(String(cString: strerror(errno)))")
        }
        try FileAccess.restrict(work)
        removeAbandonedWorkFolders(in: work)
        var template = Array("\(work)/\(Self.workFolderPrefix)\(getpid())-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw ServerError.configuration(detail: "\(work): cannot create a work folder in it: \(String(cString: strerror(errno)))")
        }
        let folder = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let held = open(folder + "/.lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileAccess.privateFile)
        guard held >= 0, flock(held, LOCK_EX | LOCK_NB) == 0 else {
            throw ServerError.configuration(detail: "\(folder)/.lock: cannot lock the work folder: \(String(cString: strerror(errno)))")
        }
        // `held` stays open, and so locked, until the process ends: that is what marks the
        // folder as in use.
        return folder
    }

    /// Removes the work folders in `work` that no running server holds; returns their names.
    /// One that cannot be removed is left for the next start.
    @discardableResult
    func removeAbandonedWorkFolders(in work: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: work)) ?? []
        var removed: [String] = []
        for name in names.sorted() where name.hasPrefix(Self.workFolderPrefix) {
            let folder = work + "/" + name
            var info = stat()
            guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid() else { continue }
            let lock = open(folder + "/.lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            if lock >= 0 {
                let free = flock(lock, LOCK_EX | LOCK_NB) == 0
                // Let go before removing: over NFS an open file cannot leave its folder.
                close(lock)
                guard free else { continue }
            } else if errno != ENOENT {
                continue
            }
            // A folder without a lock file was cut between its making and its locking.
            if (try? FileManager.default.removeItem(atPath: folder)) != nil { removed.append(name) }
        }
        return removed
    }
}
