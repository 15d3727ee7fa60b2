"""Landlock, Linux's unprivileged sandbox, through its three system calls (ctypes, no extension).

A ruleset lists what is allowed; everything it handles and does not allow is refused with EACCES
once a process restricts itself with it. Rules are inherited beneath a directory, so "everything
but X" is built by allowing X's siblings (see `agent_repl.core.sandbox.policy`). The ruleset is
built once in the agent and entered by one thread of the agent's, which starts the commands.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
from dataclasses import dataclass
from functools import cache

# System call numbers are the same on every architecture Linux added Landlock on after 5.13.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2

# Filesystem rights, each with the ABI that introduced it.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2: link or rename across directories
FS_TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

FS_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
FS_WRITE_ABI1 = (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG
                 | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM)  # fmt: skip
# Rights a regular file (not a directory) may be given.
FS_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE


class LandlockError(OSError):
    """A Landlock call failed; the message names the call and the path."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]  # fmt: skip


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _syscall(number: int, *args: object) -> int:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(ctypes.c_long(number), *args))


@cache
def abi_version() -> int:
    """The kernel's Landlock ABI (0: not available: not Linux, too old, or turned off at boot)."""
    if platform.system() != "Linux":
        return 0
    try:
        version = _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def write_rights(abi: int) -> int:
    rights = FS_WRITE_ABI1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    return rights


@dataclass
class Ruleset:
    """An open Landlock ruleset: add rules, then hand `fd` to `restrict_self` in a child."""

    fd: int
    abi: int
    handled_fs: int
    handled_net: int

    @classmethod
    def create(cls, abi: int, *, filter_tcp_connect: bool) -> Ruleset:
        handled_fs = FS_READ | write_rights(abi)
        handled_net = NET_CONNECT_TCP if abi >= 4 and filter_tcp_connect else 0
        scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
        attr = _RulesetAttr(handled_fs, handled_net, scoped)
        size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
        fd = _syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"landlock_create_ruleset failed: {os.strerror(err)}")
        os.set_inheritable(fd, False)
        return cls(fd, abi, handled_fs, handled_net)

    def allow_path(self, path: str, rights: int) -> None:
        """Allow `rights` on `path` and everything beneath it (a file takes only file rights)."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # gone since it was listed: nothing to allow
        try:
            if not os.path.isdir(f"/proc/self/fd/{fd}"):
                rights &= FS_FILE_RIGHTS
            rights &= self.handled_fs
            if not rights:
                return
            attr = _PathBeneathAttr(rights, fd)
            if _syscall(_SYS_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(attr), ctypes.c_uint32(0)) < 0:
                err = ctypes.get_errno()
                raise LandlockError(err, f"landlock_add_rule({path}) failed: {os.strerror(err)}")
        finally:
            os.close(fd)

    def allow_tcp_connect(self, port: int) -> None:
        if not self.handled_net:
            return
        attr = _NetPortAttr(NET_CONNECT_TCP, port)
        if _syscall(_SYS_ADD_RULE, self.fd, _RULE_NET_PORT, ctypes.byref(attr), ctypes.c_uint32(0)) < 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"landlock_add_rule(port {port}) failed: {os.strerror(err)}")

    def restrict_current_thread(self) -> None:
        """Confine the calling thread, and every process it starts from now on, to this ruleset.

        Landlock and no_new_privs belong to a thread, not a process: the agent gives one thread of
        its own to the sandbox and starts sandboxed commands from it (a plain fork, as fast as an
        unsandboxed one), while its other threads stay unconfined."""
        libc = _libc()
        if libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)) != 0:  # fmt: skip
            err = ctypes.get_errno()
            raise LandlockError(err, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(err)}")
        if _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"landlock_restrict_self failed: {os.strerror(err)}")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
