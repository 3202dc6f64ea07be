"""A real OpenLDAP server (Debian's `slapd`) on 127.0.0.1 with a small test directory.

`start_directory(folder)` writes a slapd.conf (mdb database, the core, cosine, inetorgperson and
nis schemas) under `folder`, loads the directory offline with `slapadd`, and starts slapd in the
foreground on a free port, as the user running the tests (root in CI: no -u/-g). `stop()` ends
it. `modify(ldif)` changes the directory through the server with `ldapmodify`, as a directory
administrator would.

The directory, under dc=workbench,dc=test:

- ou=services: cn=workbench, the service account the workbench binds as (SERVICE_PASSWORD);
- ou=people: lena, omar and ivan (inetOrgPerson, posixAccount), password PASSWORDS[uid];
- ou=groups: groupOfNames wb-alpha-ops (lena, omar), wb-alpha-admins (omar), wb-beta-business
  (lena), wb-ghost (ivan; mapped to a project that does not exist), each with the service
  account as a member too (groupOfNames cannot be empty);
- ou=posix: posixGroup wb-alpha-observers (memberUid ivan).

Needs slapd and ldap-utils (`apt-get install slapd ldap-utils`); the fixture fails, not skips,
when they are missing.
"""

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SUFFIX = "dc=workbench,dc=test"
ADMIN_DN = f"cn=admin,{SUFFIX}"
ADMIN_PASSWORD = "directory-admin-7"
SERVICE_DN = f"cn=workbench,ou=services,{SUFFIX}"
SERVICE_PASSWORD = "service-bind-3Kq"
PASSWORDS = {"lena": "lena-pass-41", "omar": "omar-pass-77", "ivan": "ivan-pass-15"}
SCHEMAS = ("core", "cosine", "inetorgperson", "nis")
PROGRAMS = ("slapd", "slapadd", "ldapmodify")


class DirectoryError(RuntimeError):
    """slapd could not be set up or started; the message holds its output."""


def person_dn(uid: str) -> str:
    return f"uid={uid},ou=people,{SUFFIX}"


def group_dn(cn: str) -> str:
    return f"cn={cn},ou=groups,{SUFFIX}"


def _program(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        raise DirectoryError(
            f"{name} is not installed (Debian: apt-get install slapd ldap-utils); "
            "the LDAP tests need a real directory server"
        )
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _entries() -> str:
    people = []
    for number, (uid, password) in enumerate(PASSWORDS.items(), start=1):
        people.append(
            f"""dn: {person_dn(uid)}
objectClass: inetOrgPerson
objectClass: posixAccount
uid: {uid}
cn: {uid.title()} Tester
givenName: {uid.title()}
sn: Tester
mail: {uid}@example.test
uidNumber: {5000 + number}
gidNumber: 5000
homeDirectory: /home/{uid}
userPassword: {password}
"""
        )
    groups = {
        "wb-alpha-ops": ["lena", "omar"],
        "wb-alpha-admins": ["omar"],
        "wb-beta-business": ["lena"],
        "wb-ghost": ["ivan"],
    }
    # groupOfNames needs a member: the service account is one of each, so that the last person
    # can leave a group.
    group_entries = [
        f"dn: {group_dn(cn)}\nobjectClass: groupOfNames\ncn: {cn}\nmember: {SERVICE_DN}\n"
        + "".join(f"member: {person_dn(uid)}\n" for uid in members)
        for cn, members in groups.items()
    ]
    return "\n".join(
        [
            f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\n"
            "dc: workbench\no: Workbench test\n",
            *(
                f"dn: ou={ou},{SUFFIX}\nobjectClass: organizationalUnit\nou: {ou}\n"
                for ou in ("services", "people", "groups", "posix")
            ),
            f"dn: {SERVICE_DN}\nobjectClass: applicationProcess\n"
            f"objectClass: simpleSecurityObject\ncn: workbench\nuserPassword: {SERVICE_PASSWORD}\n",
            *people,
            *group_entries,
            f"dn: cn=wb-alpha-observers,ou=posix,{SUFFIX}\nobjectClass: posixGroup\n"
            "cn: wb-alpha-observers\ngidNumber: 6001\nmemberUid: ivan\n",
        ]
    )


@dataclass
class Directory:
    """One running slapd and where it keeps its files."""

    port: int
    folder: Path
    process: subprocess.Popen

    @property
    def uri(self) -> str:
        return f"ldap://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        path = self.folder / "slapd.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def modify(self, ldif: str) -> None:
        """Apply an LDIF change through the server, as the directory administrator."""
        done = subprocess.run(
            [_program("ldapmodify"), "-x", "-H", self.uri, "-D", ADMIN_DN, "-w", ADMIN_PASSWORD],
            input=ldif,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if done.returncode != 0:
            raise DirectoryError(f"ldapmodify failed: {done.stderr or done.stdout}")

    def remove_member(self, group: str, uid: str) -> None:
        self.modify(
            f"dn: {group_dn(group)}\nchangetype: modify\ndelete: member\nmember: {person_dn(uid)}\n"
        )

    def delete_person(self, uid: str) -> None:
        self.modify(f"dn: {person_dn(uid)}\nchangetype: delete\n")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def start_directory(folder: Path) -> Directory:
    """Write the configuration and the directory under `folder` (made here) and start slapd."""
    slapd, slapadd = _program("slapd"), _program("slapadd")
    _program("ldapmodify")
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    includes = "".join(f"include /etc/ldap/schema/{name}.schema\n" for name in SCHEMAS)
    conf = folder / "slapd.conf"
    conf.write_text(
        f"""{includes}pidfile {folder / "slapd.pid"}
argsfile {folder / "slapd.args"}
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 10485760
suffix "{SUFFIX}"
rootdn "{ADMIN_DN}"
rootpw {ADMIN_PASSWORD}
directory {data}
access to attrs=userPassword by anonymous auth by self read by * none
access to * by dn.exact="{SERVICE_DN}" read by self read by * none
"""
    )
    entries = folder / "entries.ldif"
    entries.write_text(_entries())
    loaded = subprocess.run(
        [slapadd, "-f", str(conf), "-l", str(entries)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if loaded.returncode != 0:
        raise DirectoryError(f"slapadd failed: {loaded.stderr or loaded.stdout}")
    port = _free_port()
    log = (folder / "slapd.log").open("w")
    # -d keeps slapd in the foreground (so this process owns it) and logs to stderr.
    process = subprocess.Popen(
        [slapd, "-d", "256", "-h", f"ldap://127.0.0.1:{port}/", "-f", str(conf)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    directory = Directory(port=port, folder=folder, process=process)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DirectoryError(f"slapd exited: {directory.log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return directory
        except OSError:
            time.sleep(0.05)
    directory.stop()
    raise DirectoryError(f"slapd did not listen in 10 s: {directory.log}")
