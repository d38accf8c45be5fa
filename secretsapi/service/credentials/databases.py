"""The database sources: PostgreSQL roles (psycopg) and MySQL/MariaDB accounts (PyMySQL).

The admin URL is the operator's (SERVICE_ROTATION_CONNECTIONS). A password never reaches a log
line or an error message: PostgreSQL gets a SCRAM verifier computed here (libpq's
PQencryptPasswordConn), so the server never sees the password itself, not even in its own log;
MySQL gets it as an escaped literal of ``ALTER USER ... IDENTIFIED BY``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

from secretsapi.service.errors import GeneratorError

CONNECT_SECONDS = 5
# A login refused (wrong or expired password, no such role): the credential does not work. Any
# other failure (the server unreachable) says nothing about it, and is an error.
REFUSED_SQLSTATES = frozenset({"28P01", "28000"})
# libpq reports a refused connection without its SQLSTATE: the server's FATAL message says it.
REFUSED_LOGIN = re.compile(r"authentication failed|not permitted to log in|role \".*\" does not exist|pg_hba\.conf")
REFUSED_MYSQL_CODES = frozenset({"1045", "1698", "1862"})  # access denied; expired password


class Postgres:
    def __init__(self, url: str) -> None:
        self._url = url

    @contextmanager
    def _admin(self) -> Iterator[Any]:
        import psycopg

        try:
            with psycopg.connect(self._url, connect_timeout=CONNECT_SECONDS, autocommit=True) as conn:
                yield conn
        except psycopg.Error as exc:
            raise GeneratorError(f"PostgreSQL: {type(exc).__name__}: {_first_line(exc)}") from None

    def set_password(self, user: str, password: str) -> None:
        from psycopg import sql

        with self._admin() as conn:
            verifier = conn.pgconn.encrypt_password(password.encode(), user.encode(), b"scram-sha-256")
            conn.execute(sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(
                sql.Identifier(user), sql.Literal(verifier.decode())))

    def verify(self, user: str, password: str) -> bool:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        params = conninfo_to_dict(self._url)
        params.update(user=user, password=password, connect_timeout=CONNECT_SECONDS)
        try:
            with psycopg.connect(make_conninfo("", **params)) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError as exc:
            if exc.sqlstate in REFUSED_SQLSTATES or REFUSED_LOGIN.search(str(exc)):
                return False
            raise GeneratorError(f"PostgreSQL: cannot check the credential: {_first_line(exc)}") from None
        return True


class MySQL:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._params: dict[str, Any] = {
            "host": parts.hostname or "127.0.0.1", "port": parts.port or 3306,
            "user": unquote(parts.username or ""), "password": unquote(parts.password or ""),
            "database": unquote(parts.path.lstrip("/")) or None, "connect_timeout": CONNECT_SECONDS,
        }

    @contextmanager
    def _admin(self) -> Iterator[Any]:
        import pymysql

        try:
            conn = pymysql.connect(**self._params, autocommit=True)
        except pymysql.Error as exc:
            raise GeneratorError(f"MySQL: {type(exc).__name__}: code {_code(exc)}") from None
        try:
            yield conn
        except pymysql.Error as exc:
            raise GeneratorError(f"MySQL: {type(exc).__name__}: code {_code(exc)}") from None
        finally:
            conn.close()

    def set_password(self, user: str, password: str) -> None:
        with self._admin() as conn, conn.cursor() as cursor:
            # Every account of that name (``'app'@'%'``, ``'app'@'localhost'``): a client may match either.
            cursor.execute("SELECT Host FROM mysql.user WHERE User = %s", (user,))
            hosts = [row[0] for row in cursor.fetchall()]
            if not hosts:
                raise GeneratorError(f"MySQL: no account named '{user}'")
            for host in hosts:
                cursor.execute("ALTER USER %s@%s IDENTIFIED BY %s", (user, host, password))

    def verify(self, user: str, password: str) -> bool:
        import pymysql

        params = {**self._params, "user": user, "password": password}
        try:
            conn = pymysql.connect(**params)
        except pymysql.err.OperationalError as exc:
            if _code(exc) in REFUSED_MYSQL_CODES:
                return False
            raise GeneratorError(f"MySQL: cannot check the credential: code {_code(exc)}") from None
        try:
            with conn.cursor() as cursor:
                cursor.execute("SELECT 1")
        finally:
            conn.close()
        return True


def _first_line(exc: BaseException) -> str:
    # psycopg's messages name roles and servers, never the statement's literal.
    return str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"


def _code(exc: BaseException) -> str:
    # PyMySQL's message may quote the statement: only its number is shown.
    return str(exc.args[0]) if exc.args else "unknown"
