import os, pty, subprocess, sys, time, select, json
master, slave = pty.openpty()
name = os.ttyname(slave)
wr = os.open(name, os.O_WRONLY | os.O_NOCTTY)
os.close(slave)
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=wr, stderr=subprocess.PIPE, start_new_session=True)
os.close(wr)
out = b''; sent = False; t0 = time.time()
while p.poll() is None and time.time() - t0 < 60:
    r, _, _ = select.select([master], [], [], 0.2)
    if r:
        try: out += os.read(master, 4096)
        except OSError: break
    if not sent and b'READY' in out:
        os.write(master, b'hunter2\n'); sent = True
err = p.stderr.read().decode(errors='replace')
print(json.dumps({"tty": out.decode(errors='replace'), "stderr": err[-2000:]}))
