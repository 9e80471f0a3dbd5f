"""``xceadmin db current`` / ``xceadmin db upgrade``: the database schema, changed only when asked.

A controller never migrates an existing database (:mod:`xce.controller.store.migrate`); an
administrator does, with every controller stopped and a backup taken. ``upgrade`` refuses while a
controller runs on the database: a live leadership lease on PostgreSQL, the state directory's lock
on SQLite.
"""

from __future__ import annotations

import fcntl
import os
import sys

from xce.cli.spec import JSON, Command, Group, Opt


def _engine(db: str | None, state_dir: str | None):
    from xce.client import statedir
    from xce.controller.store import engine as store_engine

    sd = statedir.resolve(state_dir)
    try:
        url = store_engine.normalize_url(db, statedir.sqlite_path(sd))
    except store_engine.StoreURLError as exc:
        _fail(str(exc), 2)
    if url.startswith("sqlite") and not statedir.sqlite_path(sd).exists():
        _fail(f"no database: {statedir.sqlite_path(sd)} does not exist (pass --db for PostgreSQL, or the "
              f"--state-dir of a cluster)", 1)
    return store_engine.open_engine(url), sd


def _fail(message: str, code: int = 1):
    print(f"xceadmin db: {message}", file=sys.stderr)
    raise SystemExit(code)


def _shown(engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def _running_controller(engine, sd) -> str | None:
    """Who would be upset by a migration now, or None."""
    import sqlalchemy as sa

    from xce.client import statedir
    from xce.controller.ha.leadership import Identity, Lease

    if engine.dialect.name == "postgresql":
        try:
            with engine.connect() as conn:
                info = Lease(Identity("", "", 0, "", "")).read(conn)
        except sa.exc.SQLAlchemyError:
            return None  # no leadership table yet: an old schema, nobody can lead on it
        if info is not None and not info.expired:
            return f"controller {info.url or info.holder} leads on it (lease for {info.remaining_s:.1f} s more)"
        return None
    fd = os.open(statedir.lock_path(sd), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        info = statedir.read_info(sd) or {}
        return f"controller pid {info.get('pid', '?')} uses the state directory {sd}"
    finally:
        os.close(fd)
    return None


def current(db: str | None, state_dir: str | None, as_json: bool) -> int:
    import sqlalchemy as sa

    from xce.cli.client import print_json
    from xce.controller.store import migrate

    engine, _ = _engine(db, state_dir)
    try:
        rev = migrate.revision(engine)
    except sa.exc.SQLAlchemyError as exc:
        _fail(f"cannot read {_shown(engine)}: {str(exc).splitlines()[0]}")
    finally:
        engine.dispose()
    if as_json:
        print_json({"database": _shown(engine), "revision": rev.current, "head": rev.head,
                    "up_to_date": rev.at_head})
    elif rev.current is None:
        print(f"{_shown(engine)}: no XCE schema yet (a controller or `xceadmin db upgrade` creates revision "
              f"{rev.head})")
    elif rev.at_head:
        print(f"{_shown(engine)}: revision {rev.current} (up to date)")
    else:
        print(f"{_shown(engine)}: revision {rev.current}; this XCE needs {rev.head}: run `xceadmin db upgrade`")
    return 0 if rev.at_head else 1


def upgrade(db: str | None, state_dir: str | None, force: bool, as_json: bool) -> int:
    import sqlalchemy as sa

    from xce.cli.client import print_json
    from xce.controller.store import migrate

    engine, sd = _engine(db, state_dir)
    try:
        busy = _running_controller(engine, sd)
        if busy and not force:
            _fail(f"{busy}: stop every controller first (or pass --force)")
        rev = migrate.upgrade(engine)
    except sa.exc.SQLAlchemyError as exc:
        _fail(f"upgrading {_shown(engine)} failed, nothing was changed: {str(exc).splitlines()[0]}")
    finally:
        engine.dispose()
    if as_json:
        print_json({"database": _shown(engine), "from": rev.current, "to": rev.head})
    elif rev.current == rev.head:
        print(f"{_shown(engine)}: already at revision {rev.head}; nothing to do")
    elif rev.current is None:
        print(f"{_shown(engine)}: created the XCE schema (revision {rev.head})")
    else:
        print(f"{_shown(engine)}: upgraded from revision {rev.current} to {rev.head}")
    return 0


def _db_options() -> list[Opt]:
    return [Opt("db", ("--db",), env="XCE_DB", metavar="URL",
                help="Database URL (postgresql://...); default: the SQLite store of the state directory."),
            Opt("state_dir", ("--state-dir",), complete="dir", help="State directory [env XCE_STATE_DIR; ~/.xce]")]


COMMAND_SPECS = [Group("db", "The database schema: which revision it is at, and upgrading it.", [
    Command("current", "Print the database's schema revision and whether it needs an upgrade (exit 0 up to date, "
                       "1 needs `xceadmin db upgrade`).",
            [*_db_options(), JSON], current,
            examples=("xceadmin db current --state-dir /var/lib/xce",
                      "XCE_DB=postgresql://xce@db/xce xceadmin db current")),
    Command("upgrade", "Bring the database's schema to this XCE's revision. Stop every controller and back the "
                       "database up first.",
            [*_db_options(), Opt("force", ("--force",), bool, False,
                                 help="Upgrade even though a controller seems to run on the database."), JSON],
            upgrade,
            examples=("xceadmin db upgrade --state-dir /var/lib/xce",
                      "XCE_DB=postgresql://xce@db/xce xceadmin db upgrade")),
], examples=("xceadmin db current", "xceadmin db upgrade"))]
