"""Files written atomically: to a temporary file in the target's folder, flushed to disk,
then renamed over the target, so the old file stays whole until the new one is complete
(model files, Dask checkpoints, the command line's predictions). A failure at any point,
an interrupt included, removes the temporary file and leaves the target as it was."""
import contextlib
import errno
import os
import secrets
import stat


@contextlib.contextmanager
def atomic_path(path):
    """A temporary path to write to; when the block completes it is synced and renamed over
    ``path`` (through a symlink, as ``open`` would write), keeping an existing file's mode.

    Raises ``FileNotFoundError`` naming ``path`` when its folder does not exist (not the
    temporary file's hidden name)."""
    target = os.path.realpath(os.fspath(path))  # through a symlink, as open() would write
    folder, name = os.path.split(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, f"no folder {folder!r} to write in",
                                os.fspath(path))
    temp = os.path.join(folder, f".{name}.{secrets.token_hex(8)}.tmp")
    try:
        # 0o666 less the umask, as open() gives a new file; an existing file keeps its mode
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as err:  # named by the target, not the temporary file's hidden name
        raise type(err)(err.errno, f"cannot create a file in {folder!r} ({err.strerror})",
                        os.fspath(path)) from None
    try:
        yield temp
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_atomic(path, text):
    """Write ``text`` (str, as UTF-8, or bytes) to ``path`` atomically (``atomic_path``)."""
    with atomic_path(path) as temp:
        if isinstance(text, bytes):
            with open(temp, "wb") as fh:
                fh.write(text)
        else:
            with open(temp, "w", encoding="utf-8") as fh:
                fh.write(text)
