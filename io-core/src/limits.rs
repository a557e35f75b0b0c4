//! Bounds on untrusted input: the JSON bounds of [`agentio_schema::limits`] (how deep a value
//! may nest, how much of it an error may show), and files read whole only when they are regular
//! files within a size ([`read_file_bounded`]).

pub use agentio_schema::limits::*;

/// Reads the file at `path` whole, when it is a regular file of at most `limit` bytes: for a
/// path a user gave (a command's argument, a configuration file), which may name anything.
///
/// The file is opened without blocking (on Unix), so a FIFO with no writer is refused, not
/// waited on; a device (`/dev/zero`, a terminal), a directory or a socket is refused before a
/// byte is read, and a larger file once `limit + 1` bytes are in. A refusal is an
/// [`std::io::ErrorKind::InvalidInput`] error reading `not a regular file` or `larger than N
/// bytes`; an error opening or reading the file is returned as it is.
///
/// ```
/// use agentio_core::limits::read_file_bounded;
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("w.yaml");
/// std::fs::write(&path, "name: demo\n").unwrap();
/// assert_eq!(read_file_bounded(&path, 11).unwrap(), b"name: demo\n");
/// assert_eq!(read_file_bounded(&path, 10).unwrap_err().to_string(), "larger than 10 bytes");
/// # #[cfg(unix)]
/// assert_eq!(
///     read_file_bounded("/dev/zero".as_ref(), 10).unwrap_err().to_string(),
///     "not a regular file"
/// );
/// ```
pub fn read_file_bounded(path: &std::path::Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        rustix::fs::OFlags::NONBLOCK.bits() as i32,
    );
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    read_limited(file, limit)
}

/// Reads `reader` to its end when that is at most `limit` bytes; past it, an
/// [`std::io::ErrorKind::InvalidInput`] error reading `larger than N bytes`, with no more than
/// `limit + 1` bytes read.
///
/// ```
/// use agentio_core::limits::read_limited;
/// assert_eq!(read_limited(&b"0123456789"[..], 10).unwrap().len(), 10);
/// assert_eq!(read_limited(&b"0123456789a"[..], 10).unwrap_err().to_string(), "larger than 10 bytes");
/// ```
pub fn read_limited(reader: impl std::io::Read, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod file_tests {
    use super::read_file_bounded;
    use std::io::ErrorKind;

    #[test]
    fn a_regular_file_is_read_up_to_its_limit_and_one_byte_more_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_file_bounded(&path, 10).unwrap(), b"0123456789");
        assert_eq!(read_file_bounded(&path, 11).unwrap(), b"0123456789");
        let err = read_file_bounded(&path, 9).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), "larger than 9 bytes");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(read_file_bounded(&path, 0).unwrap(), b"");
        std::fs::write(&path, b"x").unwrap();
        assert!(read_file_bounded(&path, 0).is_err());
        // No wrap-around at the largest limit.
        assert_eq!(read_file_bounded(&path, u64::MAX).unwrap(), b"x");
    }

    #[test]
    fn what_is_not_a_regular_file_is_refused_and_a_missing_one_reported() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_file_bounded(dir.path(), 100).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), "not a regular file");
        #[cfg(unix)]
        assert_eq!(
            read_file_bounded("/dev/zero".as_ref(), u64::MAX)
                .unwrap_err()
                .to_string(),
            "not a regular file"
        );
        let missing = read_file_bounded(&dir.path().join("missing"), 100).unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
    }

    /// A FIFO with no writer is refused at once: the open does not wait for a writer.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &path,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let reader = path.clone();
        std::thread::spawn(move || {
            let _ = done.send(read_file_bounded(&reader, 100).map_err(|e| e.to_string()));
        });
        let answer = finished
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("answered without a writer");
        assert_eq!(answer.unwrap_err(), "not a regular file");
    }
}
