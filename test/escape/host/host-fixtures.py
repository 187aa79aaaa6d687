"""Host objects the escape attacks aim at, and their state on request.

One process of the runner's own user keeps them, so they live where an attacker would find them:
the host's IPC namespace (SysV segment, semaphore, message queue; a POSIX message queue), the
session and user keyrings, a session-less pty, a FIFO and a listening unix socket outside the
roots. It also reads the scheduling, priority and resource state of the host processes named at
setup (the helper, the runner). Test-only.

Protocol: one JSON command per line on stdin, one JSON answer per line on stdout.
  {"op": "setup", "tag": T, "out": DIR, "root": DIR, "pids": [..]} -> {"env": {NAME: value}}
  {"op": "inspect", "drain": bool} -> {"state": {...}}   (drain: read the pty, FIFO and socket
                                                         queues, which consumes them)
  {"op": "teardown"} -> {}
"""
import ctypes
import json
import os
import re
import socket
import sys
import tty
import zlib

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]

SYS_ADD_KEY, SYS_KEYCTL, SYS_IOPRIO_GET = 248, 250, 252
KEYCTL_SETPERM, KEYCTL_DESCRIBE, KEYCTL_LINK, KEYCTL_UNLINK, KEYCTL_READ, KEYCTL_INVALIDATE = 5, 6, 8, 9, 11, 21
KEYCTL_SET_TIMEOUT = 15
# A key a killed run leaves in a keyring no purge reaches (a session's) expires by itself.
HOST_KEY_TIMEOUT_S = 1800
SESSION, USER = -3, -4
IPC_CREAT, IPC_EXCL, IPC_NOWAIT, IPC_RMID, SETVAL = 0o1000, 0o2000, 0o4000, 0, 16
# possessor: everything; user: view, read, search (so the same uid can read it without possessing it)
KEY_PERM = 0x3F0B0000


def sc(number, *args):
    ctypes.set_errno(0)
    r = libc.syscall(number, *args)
    return r, ctypes.get_errno()


class MsgBuf(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 64)]


class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long),
                ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]


state = {}


def secret():
    return ("cordon-secret-" + state["tag"]).encode()


def key_of(tag):
    # A SysV key per runner: objects of concurrent runners never collide.
    return (zlib.crc32(tag.encode()) & 0x0FFFFFF0) | 0x40000000


def add_host_key(desc, ring):
    kid, e = sc(SYS_ADD_KEY, b"user", desc.encode(), secret(), len(secret()), ctypes.c_int(SESSION))
    if kid < 0:
        raise OSError(e, "add_key")
    sc(SYS_KEYCTL, KEYCTL_SET_TIMEOUT, kid, ctypes.c_uint(HOST_KEY_TIMEOUT_S))
    sc(SYS_KEYCTL, KEYCTL_SETPERM, kid, ctypes.c_uint(KEY_PERM))
    if ring != SESSION:
        sc(SYS_KEYCTL, KEYCTL_LINK, kid, ctypes.c_int(ring))
        sc(SYS_KEYCTL, KEYCTL_UNLINK, kid, ctypes.c_int(SESSION))
    return kid


def setup(tag, out, root, pids):
    state.clear()
    purge_stale_keys()
    state.update(tag=tag, out=out, root=root, pids=pids, base=key_of(tag))
    try:
        os.setxattr(os.path.join(root, "file"), "user.keep", b"1")  # the removexattr attack's target
    except OSError:
        pass
    base = state["base"]
    shm = libc.shmget(base, 4096, IPC_CREAT | IPC_EXCL | 0o600)
    addr = libc.shmat(shm, None, 0)
    ctypes.memmove(addr, secret(), len(secret()))
    sem = libc.semget(base + 1, 1, IPC_CREAT | IPC_EXCL | 0o600)
    libc.semctl(sem, 0, SETVAL, ctypes.c_int(3))
    msg = libc.msgget(base + 2, IPC_CREAT | IPC_EXCL | 0o600)
    buf = MsgBuf(1, secret())
    libc.msgsnd(msg, ctypes.byref(buf), len(secret()), IPC_NOWAIT)
    mq_name = "/cordon-escape-" + tag
    # A small queue: one crashed run's leak must not use up the uid's RLIMIT_MSGQUEUE for the next.
    attr = MqAttr(0, 2, 128, 0)
    mq = libc.mq_open(mq_name.encode(), os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NONBLOCK, 0o600, ctypes.byref(attr))
    if mq < 0:
        raise OSError(ctypes.get_errno(), "mq_open")
    libc.mq_send(mq, secret(), len(secret()), 0)
    os.close(mq)
    skey = add_host_key("cordon-escape-" + tag + "-s", SESSION)
    ukey = add_host_key("cordon-escape-" + tag + "-u", USER)
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    os.set_blocking(slave, False)
    os.write(master, secret() + b"\n")
    fifo = os.path.join(out, "hostfifo")
    os.mkfifo(fifo, 0o666)
    fifo_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    sock_path = os.path.join(out, "hostsock")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(sock_path)
    sock.listen(16)
    sock.setblocking(False)
    state.update(shm=shm, addr=addr, sem=sem, msg=msg, mq=mq_name, skey=skey, ukey=ukey, master=master,
                 slave=slave, fifo_fd=fifo_fd, sock=sock)
    return {
        "SHMID": str(shm), "SEMID": str(sem), "MSGID": str(msg), "SYSVKEY": str(base + 3),
        "MQNAME": mq_name, "SKEY": str(skey), "UKEY": str(ukey), "KEYDESC": "cordon-escape-" + tag,
        "PTS": os.ttyname(slave), "HOSTFIFO": fifo, "HOSTSOCK": sock_path,
    }


def sysv_rows():
    base = state["base"]
    rows = {}
    for kind in ("shm", "sem", "msg"):
        with open("/proc/sysvipc/" + kind) as f:
            header = f.readline().split()
            for line in f:
                cols = dict(zip(header, line.split()))
                if base <= int(cols["key"]) < base + 4:
                    rows[kind + " " + cols["key"]] = cols
    return rows


def keyring(ring, marker=None):
    marker = marker or state["tag"]
    buf = ctypes.create_string_buffer(4096)
    n, _ = sc(SYS_KEYCTL, KEYCTL_READ, ctypes.c_int(ring), buf, 4096)
    ids = [int.from_bytes(buf.raw[i:i + 4], "little", signed=True) for i in range(0, max(n, 0), 4)]
    found = []
    for kid in ids:
        d = ctypes.create_string_buffer(512)
        if sc(SYS_KEYCTL, KEYCTL_DESCRIBE, kid, d, 512)[0] > 0 and marker in d.value.decode(errors="replace"):
            found.append([kid, d.value.decode(errors="replace")])
    return sorted(found)


def purge_stale_keys():
    # Keys a crashed earlier run left in this uid's persistent user keyring count against its
    # quota (20000 bytes for a non-root uid): ours (cordon-escape-<pid>-…) of runners that are gone.
    for kid, desc in keyring(USER, "cordon-escape-"):
        m = re.search(r"cordon-escape-(\d+)-", desc)
        if m is None or os.path.exists("/proc/" + m.group(1)):
            continue
        unlink_and_invalidate(kid, USER)


def unlink_and_invalidate(kid, ring):
    # Unlink first: a link costs its keyring 4 bytes of the uid's key quota, given back by an
    # unlink but never by the garbage collector that drops a dead key's link. Invalidating a
    # linked key leaked them, about 2 KB per suite as nobody, until add_key met EDQUOT.
    sc(SYS_KEYCTL, KEYCTL_UNLINK, kid, ctypes.c_int(ring))
    sc(SYS_KEYCTL, KEYCTL_INVALIDATE, kid)


def key_payload(kid):
    buf = ctypes.create_string_buffer(256)
    n, e = sc(SYS_KEYCTL, KEYCTL_READ, kid, buf, 256)
    return buf.raw[:n].decode(errors="replace") if n >= 0 else "errno %d" % e


def mq_state(name):
    q = libc.mq_open(name.encode(), os.O_RDONLY | os.O_NONBLOCK, 0, None)
    if q < 0:
        return "errno %d" % ctypes.get_errno()
    attr = MqAttr()
    libc.mq_getattr(q, ctypes.byref(attr))
    os.close(q)
    return "messages %d" % attr.curmsgs


def process_state(pid):
    try:
        with open("/proc/%d/limits" % pid) as f:
            limits = f.read()
        return {
            "limits": limits,
            "nice": os.getpriority(os.PRIO_PROCESS, pid),
            "policy": os.sched_getscheduler(pid),
            "priority": os.sched_getparam(pid).sched_priority,
            "affinity": sorted(os.sched_getaffinity(pid)),
            "ioprio": sc(SYS_IOPRIO_GET, 1, pid)[0],
        }
    except OSError as e:
        return {"gone": e.errno}


def xattrs(path):
    try:
        return sorted([n, os.getxattr(path, n).decode(errors="replace")] for n in os.listxattr(path))
    except OSError as e:
        return "errno %d" % e.errno


def read_all(fd):
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        out += chunk
    return out.decode(errors="replace")


def inspect(drain):
    s = {
        "sysv": sysv_rows(),
        "shm content": ctypes.string_at(state["addr"], len(secret())).decode(errors="replace"),
        "sem value": libc.semctl(state["sem"], 0, 12),  # GETVAL
        "mq": mq_state(state["mq"]),
        "mq created": mq_state(state["mq"] + "-new"),
        "session keyring": keyring(SESSION),
        "user keyring": keyring(USER),
        "session key": key_payload(state["skey"]),
        "user key": key_payload(state["ukey"]),
        "processes": {str(p): process_state(p) for p in state["pids"]},
        "root file xattrs": xattrs(os.path.join(state["root"], "file")),
    }
    if drain:
        accepted = 0
        while True:
            try:
                c, _ = state["sock"].accept()
                c.close()
                accepted += 1
            except (BlockingIOError, OSError):
                break
        s.update({
            "pty input": read_all(state["slave"]),
            "pty output": read_all(state["master"]),
            "fifo": read_all(state["fifo_fd"]),
            "socket connections": accepted,
        })
    return s


def teardown():
    if not state or "addr" not in state:  # a setup that failed part way leaves nothing of ours to undo
        state.clear()
        return
    libc.shmdt(ctypes.c_void_p(state["addr"]))
    for name, cols in sysv_rows().items():
        kind = name.split()[0]
        ident = int(cols["shmid" if kind == "shm" else "semid" if kind == "sem" else "msqid"])
        {"shm": libc.shmctl, "sem": libc.semctl, "msg": libc.msgctl}[kind](ident, *([0, IPC_RMID] if kind == "sem" else [IPC_RMID, None]))
    for name in (state["mq"], state["mq"] + "-new"):
        libc.mq_unlink(name.encode())
    for ring in (SESSION, USER):
        for kid, _ in keyring(ring):
            unlink_and_invalidate(kid, ring)
    for kid in (state["skey"], state["ukey"]):
        sc(SYS_KEYCTL, KEYCTL_INVALIDATE, kid)
    for fd in (state["master"], state["slave"], state["fifo_fd"]):
        os.close(fd)
    state["sock"].close()
    state.clear()


for line in sys.stdin:
    cmd = json.loads(line)
    try:
        if cmd["op"] == "setup":
            teardown()
            answer = {"env": setup(cmd["tag"], cmd["out"], cmd["root"], cmd["pids"])}
        elif cmd["op"] == "inspect":
            answer = {"state": inspect(cmd.get("drain", False))}
        else:
            teardown()
            answer = {}
    except Exception as e:  # the harness reports it as a failed fixture
        answer = {"error": repr(e)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
teardown()
