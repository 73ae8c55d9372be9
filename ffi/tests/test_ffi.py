"""The mobile library through its generated Python bindings, against a real taxi-fiscal server.

Run by `scripts/test-ffi` (plain python3, standard library only):

    PYTHONPATH=target/bindings/python TAXI_FISCAL_BIN=target/debug/taxi-fiscal python3 ffi/tests/test_ffi.py

`target/bindings/python` holds `taxi_fiscal.py` and `libtaxi_fiscal_ffi.so` (scripts/bindings).
The flow is the officer's day: open the device database, log in, pull the registry, look a
taxi up, check an art. 8 case, write an auto offline with a photo, sync, and see the auto on
the server as the office (HTTP API, urllib). Then every kind of `FiscalError`, each from a
real situation.
"""

import json
import os
import socket
import sys
import tempfile
import threading
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import taxi_fiscal as tf  # noqa: E402  (generated: scripts/bindings)
from demo_server import DemoServer  # noqa: E402

OFFICER = ("fiscal", "fiscal-demo", "tablet-fiscal-01")
COORDINATOR = ("coordenador", "coordenador-demo", "celular-coordenador-s01")
OFFICE = ("escritorio", "escritorio-demo", "desktop-escritorio")
# A JPEG's first bytes are enough for a content-addressed photo.
PHOTO = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 8


class Keystore(tf.SecretStore):
    """The app's keystore (`SecretStore`), implemented on this side of the callback as an app
    implements it on the Android Keystore or the iOS Keychain: here in memory."""

    def __init__(self, failure=None):
        self.entries = {}
        self.failure = failure

    def load(self, name):
        if self.failure:
            raise tf.SecretStoreError.Failed(self.failure)
        return self.entries.get(name)

    def save(self, name, value):
        self.entries[name] = bytes(value)

    def delete(self, name):
        self.entries.pop(name, None)


_KEYSTORES = {}


def keystore(path):
    """One keystore per database file, the same at every reopen (as an app's is)."""
    return _KEYSTORES.setdefault(path, Keystore())


def open_session(path, url, device_id, options=None):
    """`FieldSession.open` with the keystore of `path`."""
    return tf.FieldSession.open(path, url, device_id, keystore(path), options)


def office_get(url, path):
    """GET an API path as the office user (the Unidade de Transportes reads what devices sent)."""
    body = json.dumps({"username": OFFICE[0], "password": OFFICE[1], "device_id": OFFICE[2]}).encode()
    req = urllib.request.Request(
        f"{url}/v1/auth/login", data=body, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        token = json.load(r)["access_token"]
    req = urllib.request.Request(f"{url}{path}", headers={"authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def closed_port_url():
    """An address where nothing listens: a port the OS gave us, then closed."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


class Steps(tf.SyncListener):
    """Records the progress calls; optionally cancels the sync from inside the first one."""

    def __init__(self, session=None):
        self.calls = []
        self.threads = set()
        self.session = session

    def on_progress(self, progress):
        self.calls.append(progress)
        self.threads.add(threading.get_ident())
        if self.session is not None:
            self.session.cancel_sync()

    def steps(self):
        """(step, index, count) of each step as it started, in order."""
        out = []
        for p in self.calls:
            if not out or out[-1][0] != p.step:
                out.append((p.step, p.step_index, p.step_count))
        return out


class FieldSessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = DemoServer(os.environ["TAXI_FISCAL_BIN"]).__enter__()
        cls.dir = tempfile.TemporaryDirectory(prefix="taxi-fiscal-ffi-test-")

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)
        cls.dir.cleanup()

    def db(self, name):
        return os.path.join(self.dir.name, name)

    def session(self, name, user):
        """A device logged in as `user`, with the registry; and the login's answer."""
        s = open_session(self.db(name), self.server.url, user[2])
        login = s.login(user[0], user[1])
        s.pull_registry()
        return s, login

    # ------------------------------------------------------------------ the officer's day

    def test_officer_flow_end_to_end(self):
        s = open_session(self.db("officer.db"), self.server.url, OFFICER[2])
        login = s.login(OFFICER[0], OFFICER[1])
        self.assertEqual(login.username, "fiscal")
        self.assertEqual(login.role, "officer")
        self.assertEqual(login.server_device_id, "tablet-fiscal-01")

        pulled = s.pull_registry()
        self.assertEqual(pulled.mode, tf.RegistryUpdateMode.SNAPSHOT)
        self.assertGreaterEqual(pulled.version, 1)
        self.assertGreater(pulled.rows, 100)

        # Look-ups: permit 0003 has two auxiliary drivers (demo cases).
        p3 = s.lookup_permit("0003")
        self.assertIsNotNone(p3)
        self.assertEqual(p3.permit_number, "0003")
        self.assertEqual(len(p3.auxiliaries), 2)
        self.assertEqual(p3.registry.version, pulled.version)
        self.assertEqual(s.lookup_plate(p3.plate).permit_number, "0003")
        aux = p3.auxiliaries[0]
        person = s.lookup_person(aux.cpf)
        self.assertEqual(person.person.id, aux.id)
        self.assertIn("0003", [p.permit_number for p in person.permits])
        self.assertIsNone(s.lookup_plate("ZZZ9Z99"))
        p1 = s.lookup_permit("0001")
        self.assertNotEqual(p1.plate, p3.plate)

        # Art. 8: the auxiliary may drive the taxi he is registered on…
        own = s.check(tf.CheckRequest(vehicle=tf.VehicleQuery.PLATE(plate=p3.plate), driver=aux.cpf))
        self.assertEqual(own.driver_role, tf.DriverRole.AUXILIARY)
        self.assertEqual(own.permit_number, "0003")
        self.assertNotIn("R14", [f.rule_id for f in own.findings])
        # …and not another one (art. 8 §§ 2–3): R14, citing the article, with the registry
        # version and its age.
        other = s.check(
            tf.CheckRequest(
                vehicle=tf.VehicleQuery.PERMIT(number="0001"),
                driver=aux.cpf,
                observation=tf.Observation(idle=False),
            )
        )
        self.assertEqual(other.overall, tf.Overall.IRREGULAR)
        self.assertEqual(other.driver_role, tf.DriverRole.AUXILIARY_OF_ANOTHER_PERMIT)
        r14 = [f for f in other.findings if f.rule_id == "R14"]
        self.assertEqual(len(r14), 1, other.findings)
        self.assertIn("art. 8", r14[0].citation)
        self.assertEqual(r14[0].severity, tf.Severity.IRREGULAR)
        self.assertEqual(other.registry.version, pulled.version)
        self.assertIsNotNone(other.registry.age_seconds)
        self.assertGreaterEqual(other.registry.age_seconds, 0)

        # An auto de infração, offline: a draft (no auto numbers leased yet, so it waits for
        # one), a photo from bytes and one from a file, a witness, then issued.
        draft = s.start_infraction(
            tf.InfractionInput(
                vehicle=tf.VehicleQuery.PLATE(plate=p1.plate),
                driver=aux.cpf,
                position=tf.Position(lat=-22.7395, lon=-47.3317, accuracy_m=8.0),
                witnesses=[tf.WitnessInput(name="Maria Souza", statement="Vi o condutor")],
            )
        )
        self.assertEqual(draft.kind, tf.RecordKind.INFRACTION)
        self.assertEqual(draft.status, tf.RecordStatus.DRAFT)
        self.assertTrue(draft.waiting_for_number)
        self.assertIsNone(draft.number)
        photo = s.attach_photo(draft.id, PHOTO)
        self.assertEqual(photo.size, len(PHOTO))
        self.assertEqual(len(photo.sha256), 64)
        photo_file = self.db("cena.jpg")
        with open(photo_file, "wb") as f:
            f.write(PHOTO[::-1])
        from_file = s.attach_photo_file(draft.id, photo_file)
        self.assertNotEqual(from_file.sha256, photo.sha256)
        # The plate the lookup found is the auto's only once the officer confirms it; a draft
        # is not printed.
        self.assertIsNone(s.show_record(draft.id).vehicle_confirmation)
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            s.issue_record(draft.id, tf.SignatureInput.MISSING(reason="recusou-se a assinar"))
        self.assertEqual(e.exception.field, "vehicle_confirmation")
        self.assertIn(p1.plate, e.exception.reason)
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            s.render_record(draft.id, tf.PrintFormat.PDF)
        self.assertEqual(e.exception.field, "status")
        self.assertIn("rascunho", e.exception.reason)
        s.confirm_vehicle(draft.id)
        confirmation = s.show_record(draft.id).vehicle_confirmation
        self.assertEqual(confirmation.plate, p1.plate)
        self.assertEqual(confirmation.user_id, login.user_id)
        issued = s.issue_record(draft.id, tf.SignatureInput.MISSING(reason="recusou-se a assinar"))
        self.assertEqual(issued.status, tf.RecordStatus.ISSUED)
        self.assertTrue(issued.sealed)
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            s.confirm_vehicle(draft.id)

        # Printed on the spot, offline: two copies on a thermal printer, or a PDF.
        for fmt in (tf.PrintFormat.ESC_POS58, tf.PrintFormat.ESC_POS80):
            paper = s.render_record(draft.id, fmt)
            self.assertTrue(paper.startswith(b"\x1b@"), (fmt, paper[:8]))
            text = paper.decode("cp860", errors="replace")
            self.assertIn(p1.plate, text, fmt)
            self.assertIn("VIA DO AUTUADO", text, fmt)
        for fmt in (tf.PrintFormat.PDF, tf.PrintFormat.PDF_RECEIPT):
            paper = s.render_record(draft.id, fmt)
            self.assertTrue(paper.startswith(b"%PDF"), (fmt, paper[:8]))

        listed = s.list_records()
        self.assertEqual([r.id for r in listed], [draft.id])
        self.assertEqual(listed[0].plate, p1.plate)
        self.assertEqual(listed[0].photos, 2)
        shown = s.show_record(draft.id)
        self.assertEqual(shown.verdict.overall, tf.Overall.IRREGULAR)
        self.assertIn("R14", [b.rule_id for b in shown.legal_basis])
        self.assertTrue(shown.photos_intact)
        self.assertEqual({p.sha256 for p in shown.photos}, {photo.sha256, from_file.sha256})
        self.assertEqual(shown.witnesses[0].person.name, "Maria Souza")
        self.assertEqual(shown.driver_role, tf.DriverRole.AUXILIARY_OF_ANOTHER_PERMIT)
        self.assertEqual([e.kind for e in shown.events], ["issued"])

        status = s.sync_status()
        self.assertEqual(status.pending_records, 1)
        self.assertEqual(status.pending_photos, 2)
        self.assertEqual(status.records_waiting_for_number, 1)
        self.assertEqual(status.logged_in_as, "fiscal")

        # Cancelled from inside the first progress call: nothing is sent, nothing lost.
        cancelling = Steps(session=s)
        with self.assertRaises(tf.FiscalError.Cancelled):
            s.sync(cancelling)
        first = cancelling.calls[0]
        self.assertEqual((first.step, first.step_index, first.step_count), (tf.SyncStep.SESSION, 1, 5))
        self.assertEqual((first.records_done, first.photos_done, first.bytes_sent), (0, 0, 0))
        self.assertEqual(s.sync_status().pending_records, 1)

        # The sync, on a background thread as the app does it; progress in step order.
        steps = Steps()
        result = {}

        def run():
            try:
                result["report"] = s.sync(steps)
            except Exception as e:  # re-raised on the test's thread below
                result["error"] = e

        worker = threading.Thread(target=run)
        worker.start()
        worker.join(timeout=120)
        self.assertFalse(worker.is_alive(), "sync did not finish within 120 s")
        if "error" in result:
            raise result["error"]
        report = result["report"]
        self.assertEqual(
            steps.steps(),
            [
                (tf.SyncStep.SESSION, 1, 5),
                (tf.SyncStep.NUMBERS, 2, 5),
                (tf.SyncStep.RECORDS, 3, 5),
                (tf.SyncStep.PHOTOS, 4, 5),
                (tf.SyncStep.REGISTRY, 5, 5),
            ],
        )
        self.assertEqual(steps.threads, {worker.ident})
        # The photos step: its start with the two photos' totals, then one event per photo.
        sizes = len(PHOTO) * 2
        photo_events = [p for p in steps.calls if p.step == tf.SyncStep.PHOTOS]
        self.assertEqual([p.photos_done for p in photo_events], [0, 1, 2])
        self.assertEqual({(p.photos_total, p.photo_bytes_total) for p in photo_events}, {(2, sizes)})
        self.assertEqual([p.photo_bytes_done for p in photo_events], [0, len(PHOTO), sizes])
        # Bytes on the wire only grow; the last event has every count at its total and the
        # report's bytes.
        for a, b in zip(steps.calls, steps.calls[1:]):
            self.assertGreaterEqual(b.bytes_sent, a.bytes_sent)
            self.assertGreaterEqual(b.bytes_received, a.bytes_received)
        last = steps.calls[-1]
        self.assertEqual((last.records_done, last.records_total), (1, 1))
        self.assertEqual((last.photos_done, last.photos_total), (2, 2))
        self.assertEqual(last.photo_bytes_done, last.photo_bytes_total)
        self.assertEqual((last.bytes_sent, last.bytes_received), (report.bytes_up, report.bytes_down))
        self.assertGreater(last.bytes_sent, sizes)
        self.assertTrue(report.ok, report.problems)
        self.assertEqual(report.numbers.numbered, 1)
        self.assertEqual(report.records_sent, 1)
        self.assertEqual(report.records_acknowledged, 1)
        self.assertEqual(report.rejections, [])
        self.assertEqual(report.photos_uploaded, 2)
        self.assertEqual(report.registry.mode, tf.RegistryUpdateMode.CURRENT)
        self.assertGreater(report.bytes_up, 0)
        self.assertEqual(report.status.pending_records, 0)
        self.assertEqual(report.status.pending_photos, 0)
        self.assertIsNotNone(report.status.last_success_at)
        numbered = s.show_record(draft.id)
        self.assertIsNotNone(numbered.number)

        # The office sees the auto on the server, with the number the device gave it.
        page = office_get(self.server.url, f"/v1/records?plate={p1.plate}")
        rows = [r for r in page["items"] if r["id"] == draft.id]
        self.assertEqual(len(rows), 1, page)
        self.assertEqual(rows[0]["status"], "issued")
        self.assertEqual(rows[0]["number"], numbered.number)
        self.assertEqual(rows[0]["author_user_id"], login.user_id)
        detail = office_get(self.server.url, f"/v1/records/{draft.id}")
        self.assertEqual(sorted(detail["record"]["photos"]), sorted([photo.sha256, from_file.sha256]))

        # A second sync has nothing to send.
        again = s.sync()
        self.assertTrue(again.ok)
        self.assertEqual(again.records_sent, 0)

        # The same file opened again (the app restarted) keeps session and records.
        # (The device may also hold records the server sent it, e.g. other tests' reports.)
        held = [r.id for r in s.list_records()]
        self.assertIn(draft.id, held)
        reopened = open_session(self.db("officer.db"), self.server.url, OFFICER[2])
        self.assertEqual([r.id for r in reopened.list_records()], held)
        self.assertEqual(reopened.sync_status().logged_in_as, "fiscal")

        # A sealed field cannot change once issued: the field is named.
        with self.assertRaises(tf.FiscalError.InvalidInput) as sealed:
            s.set_facts(draft.id, "outra versão")
        self.assertEqual(sealed.exception.field, "facts")

    def sync_paused_at_records(self, s):
        """Starts `s.sync()` on a worker thread that pauses as the records step starts; returns
        (worker, result dict, release event) once the pause is reached."""
        entered, release, result = threading.Event(), threading.Event(), {}

        class Pause(tf.SyncListener):
            def on_progress(self, progress):
                # The records step's start (its first event), before anything is exchanged.
                if progress.step == tf.SyncStep.RECORDS and not entered.is_set():
                    entered.set()
                    release.wait(timeout=60)

        def run():
            try:
                result["report"] = s.sync(Pause())
            except Exception as e:  # examined on the test's thread
                result["error"] = e

        worker = threading.Thread(target=run)
        worker.start()
        self.assertTrue(entered.wait(timeout=60), "the sync never reached the records step")
        return worker, result, release

    def test_local_calls_proceed_while_a_sync_runs(self):
        s, _ = self.session("concurrent.db", OFFICER)
        worker, result, release = self.sync_paused_at_records(s)
        try:
            # The sync holds its connection; look-ups, checks and writes use the other one.
            p1 = s.lookup_permit("0001")
            verdict = s.check(tf.CheckRequest(vehicle=tf.VehicleQuery.PLATE(plate=p1.plate), driver=p1.holder.cpf))
            self.assertEqual(verdict.driver_role, tf.DriverRole.HOLDER)
            saved = s.start_infraction(
                tf.InfractionInput(
                    vehicle=tf.VehicleQuery.PLATE(plate=p1.plate),
                    driver=p1.holder.cpf,
                    facts="Taxímetro sem lacre",
                    extra_rules=["R02"],
                    confirm_vehicle=True,
                    issue=tf.SignatureInput.MISSING(reason="condutor ausente"),
                )
            )
            self.assertEqual(s.sync_status().pending_records, 1)
        finally:
            release.set()
        worker.join(timeout=120)
        self.assertFalse(worker.is_alive())
        self.assertNotIn("error", result)
        # The record written meanwhile went with this very sync's records step.
        self.assertEqual(result["report"].records_acknowledged, 1)
        self.assertEqual(s.sync_status().pending_records, 0)
        self.assertIsNotNone(s.show_record(saved.id).number)

    def test_cancel_from_another_thread(self):
        s, _ = self.session("cancel.db", OFFICER)
        worker, result, release = self.sync_paused_at_records(s)
        s.cancel_sync()  # the app's cancel button, on the main thread
        release.set()
        worker.join(timeout=120)
        self.assertFalse(worker.is_alive())
        self.assertIsInstance(result.get("error"), tf.FiscalError.Cancelled)
        self.assertIn("cancelada", s.sync_status().last_error)
        # The next sync is not affected by the old cancel.
        self.assertTrue(s.sync().ok)

    def test_coordinator_reports_a_transgression_of_the_own_stand(self):
        s, login = self.session("coordinator-ok.db", COORDINATOR)
        self.assertEqual(login.role, "coordinator")
        own = self.permit_at_stand(s, login.stand_id, own_stand=True)
        report = s.start_transgression(
            tf.TransgressionInput(
                vehicle=tf.VehicleQuery.PERMIT(number=own.permit_number),
                driver=own.holder.cpf,
                gravity=tf.Gravity.LIGHT,
                facts="Discussão no ponto",
                issue=tf.SignatureInput.MISSING(reason="condutor ausente"),
                then=tf.CoordinatorStep.SETTLE(warning=tf.WarningKind.VERBAL),
            )
        )
        self.assertEqual(report.kind, tf.RecordKind.TRANSGRESSION)
        self.assertEqual(report.status, tf.RecordStatus.SETTLED_BY_COORDINATOR)
        synced = s.sync()
        self.assertTrue(synced.ok, synced.problems)
        self.assertEqual(synced.records_acknowledged, 1)

    def permit_at_stand(self, s, stand, own_stand):
        """An active permit of `stand` (or of another one), found by looking permits up."""
        for n in range(1, 122):
            p = s.lookup_permit(f"{n:04d}")
            if p is not None and isinstance(p.state, tf.PermitState.ACTIVE) and (p.stand.id == stand) == own_stand:
                return p
        self.fail("no such permit in the demo registry")

    # ------------------------------------------------------------------ every error kind

    def test_offline(self):
        s = open_session(
            self.db("offline.db"),
            closed_port_url(),
            OFFICER[2],
            tf.SessionOptions(connect_timeout_seconds=2, request_timeout_seconds=5, max_attempts=1),
        )
        with self.assertRaises(tf.FiscalError.Offline):
            s.login(OFFICER[0], OFFICER[1])

    def test_login_required(self):
        s = open_session(self.db("no-login.db"), self.server.url, OFFICER[2])
        with self.assertRaises(tf.FiscalError.LoginRequired):
            s.pull_registry()
        with self.assertRaises(tf.FiscalError.LoginRequired):
            s.sync()
        self.assertIsNotNone(s.sync_status().last_error)

    def test_refused_by_server(self):
        s = open_session(self.db("wrong-password.db"), self.server.url, OFFICER[2])
        with self.assertRaises(tf.FiscalError.RefusedByServer) as e:
            s.login(OFFICER[0], "senha-errada")
        self.assertEqual(e.exception.status, 401)
        self.assertTrue(e.exception.code)
        self.assertNotIn("senha-errada", str(e.exception))

    def test_refused_by_law(self):
        # A coordinator reporting a driver of another stand (art. 17).
        c, login = self.session("coordinator.db", COORDINATOR)
        other = self.permit_at_stand(c, login.stand_id, own_stand=False)
        with self.assertRaises(tf.FiscalError.RefusedByLaw) as e:
            c.start_transgression(
                tf.TransgressionInput(
                    vehicle=tf.VehicleQuery.PERMIT(number=other.permit_number),
                    driver=other.holder.cpf,
                    gravity=tf.Gravity.LIGHT,
                    facts="Discussão",
                )
            )
        self.assertEqual(e.exception.rule_id, "R27")
        self.assertIn("art. 17", e.exception.citation)
        self.assertNotIn(other.holder.cpf, str(e.exception))
        self.assertNotIn(other.holder.name, str(e.exception))
        # A coordinator writing an auto de infração (art. 36: only the inspecting bodies).
        with self.assertRaises(tf.FiscalError.RefusedByLaw) as e:
            c.start_infraction(tf.InfractionInput(vehicle=tf.VehicleQuery.PERMIT(number="0001"), driver=other.holder.cpf))
        self.assertEqual(e.exception.rule_id, "R35")
        self.assertIn("art. 36", e.exception.citation)
        # An officer writing a stand coordinator's report (art. 17).
        o, _ = self.session("officer-report.db", OFFICER)
        with self.assertRaises(tf.FiscalError.RefusedByLaw) as e:
            o.start_transgression(
                tf.TransgressionInput(
                    vehicle=tf.VehicleQuery.PERMIT(number="0001"),
                    driver=other.holder.cpf,
                    gravity=tf.Gravity.LIGHT,
                    facts="Discussão",
                )
            )
        self.assertEqual(e.exception.rule_id, "R27")
        self.assertEqual(o.list_records(), [])

    def test_registry_missing(self):
        s = open_session(self.db("no-registry.db"), self.server.url, OFFICER[2])
        with self.assertRaises(tf.FiscalError.RegistryMissing):
            s.check(tf.CheckRequest(vehicle=tf.VehicleQuery.PERMIT(number="0001"), driver="cpf:99940561580"))

    def test_not_found(self):
        s = open_session(self.db("not-found.db"), self.server.url, OFFICER[2])
        with self.assertRaises(tf.FiscalError.NotFound) as e:
            s.show_record("01936f4e-0000-7000-8000-000000000000")
        self.assertEqual(e.exception.what, "record")

    def test_invalid_input(self):
        s = open_session(self.db("invalid.db"), self.server.url, OFFICER[2])
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            s.lookup_plate("XYZ")
        self.assertEqual(e.exception.field, "plate")
        typed = "123.456.789-0"  # ten digits: neither a CPF nor a CNH
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            s.check(tf.CheckRequest(vehicle=tf.VehicleQuery.PERMIT(number="0001"), driver=typed))
        self.assertEqual(e.exception.field, "driver")
        self.assertNotIn("123", str(e.exception))
        # An auto whose check found nothing irregular needs a legal basis from the officer.
        o, _ = self.session("no-basis.db", OFFICER)
        p1 = o.lookup_permit("0001")
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            o.start_infraction(
                tf.InfractionInput(
                    vehicle=tf.VehicleQuery.PERMIT(number="0001"),
                    driver=p1.holder.cpf,
                    facts="Taxímetro sem lacre",
                    confirm_vehicle=True,
                    issue=tf.SignatureInput.MISSING(reason="condutor ausente"),
                )
            )
        self.assertEqual(e.exception.field, "legal_basis")
        self.assertEqual(o.list_records(), [])
        # Numbers are signed in the bindings: a negative one is refused, naming the field.
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            o.start_infraction(
                tf.InfractionInput(
                    vehicle=tf.VehicleQuery.PERMIT(number="0001"),
                    driver=p1.holder.cpf,
                    monotonic_ms=-1,
                    extra_rules=["R02"],
                )
            )
        self.assertEqual(e.exception.field, "monotonic_ms")
        self.assertEqual(o.list_records(), [])
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            open_session(self.db("bad-url.db"), "ftp:/nowhere", OFFICER[2])
        self.assertEqual(e.exception.field, "server_url")

    def test_storage(self):
        path = self.db("not-a-database.db")
        garbage = b"isto nao e um banco SQLite" * 100
        with open(path, "wb") as f:
            f.write(garbage)
        with self.assertRaises(tf.FiscalError.Storage):
            open_session(path, self.server.url, OFFICER[2])
        with open(path, "rb") as f:
            self.assertEqual(f.read(), garbage, "a foreign file must be left untouched")


    def test_the_database_is_encrypted_with_the_keystores_key(self):
        path = self.db("encrypted.db")
        s = open_session(path, self.server.url, OFFICER[2])
        s.login(OFFICER[0], OFFICER[1])
        s.pull_registry()
        holder = s.lookup_permit("0001").holder.name
        del s
        with open(path, "rb") as f:
            raw = f.read()
        self.assertFalse(raw.startswith(b"SQLite format 3"), "plain SQLite header")
        self.assertNotIn(holder.encode(), raw)
        self.assertEqual(
            sorted(keystore(path).entries), ["database-key", "device-signing-key", "session-tokens"]
        )
        # Another keystore (the app reinstalled, the file copied off the phone): unreadable, and
        # the file is left as it was.
        with self.assertRaises(tf.FiscalError.Storage) as e:
            tf.FieldSession.open(path, self.server.url, OFFICER[2], Keystore())
        self.assertIn("chave", str(e.exception))
        with open(path, "rb") as f:
            self.assertEqual(f.read(), raw)
        # The keystore failing (locked before the first unlock): said, with its reason.
        with self.assertRaises(tf.FiscalError.Storage) as e:
            tf.FieldSession.open(path, self.server.url, OFFICER[2], Keystore(failure="cofre bloqueado"))
        self.assertIn("cofre bloqueado", str(e.exception))
        # The right one: the session and the registry are there.
        again = open_session(path, self.server.url, OFFICER[2])
        self.assertEqual(again.sync_status().logged_in_as, OFFICER[0])
        self.assertEqual(again.lookup_permit("0001").holder.name, holder)


class HttpsTest(unittest.TestCase):
    """The same library against a server that serves HTTPS with a certificate from the city's
    own CA: trusted when the app passes that CA, refused as untrusted (not offline) otherwise."""

    @classmethod
    def setUpClass(cls):
        cls.server = DemoServer(os.environ["TAXI_FISCAL_BIN"], tls=True).__enter__()
        cls.dir = tempfile.TemporaryDirectory(prefix="taxi-fiscal-ffi-https-")

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)
        cls.dir.cleanup()

    def test_sync_over_https_with_the_city_ca(self):
        self.assertTrue(self.server.url.startswith("https://"), self.server.url)
        s = open_session(
            os.path.join(self.dir.name, "https.db"),
            self.server.url,
            OFFICER[2],
            tf.SessionOptions(extra_ca_pem=self.server.ca_pem),
        )
        login = s.login(OFFICER[0], OFFICER[1])
        self.assertEqual(login.username, OFFICER[0])
        summary = s.sync()
        self.assertTrue(summary.ok, summary)
        self.assertIsNotNone(s.lookup_permit("0001"))
        # The same device file opened without the CA: its sync stops as untrusted.
        without = open_session(os.path.join(self.dir.name, "https.db"), self.server.url, "")
        with self.assertRaises(tf.FiscalError.Untrusted):
            without.sync()

    def test_an_untrusted_certificate_is_refused_at_once(self):
        s = open_session(os.path.join(self.dir.name, "untrusted.db"), self.server.url, OFFICER[2])
        with self.assertRaises(tf.FiscalError.Untrusted) as e:
            s.login(OFFICER[0], OFFICER[1])
        self.assertIn("certificado", str(e.exception))

    def test_a_ca_text_without_a_certificate_is_refused_when_opening(self):
        with self.assertRaises(tf.FiscalError.InvalidInput) as e:
            open_session(
                os.path.join(self.dir.name, "bad-ca.db"),
                self.server.url,
                OFFICER[2],
                tf.SessionOptions(extra_ca_pem="isto não é um certificado"),
            )
        self.assertEqual(e.exception.field, "extra_ca_pem")


class RevokedTest(unittest.TestCase):
    """A lost tablet, revoked by the administrator: at its next contact it deletes what the
    server has and raises `Revoked`, keeping the auto the server never got."""

    def test_a_revoked_device_purges_and_says_so(self):
        with DemoServer(os.environ["TAXI_FISCAL_BIN"]) as server, tempfile.TemporaryDirectory() as d:
            s = open_session(os.path.join(d, "perdido.db"), server.url, OFFICER[2])
            s.login(OFFICER[0], OFFICER[1])
            self.assertTrue(s.sync().ok)
            self.assertIsNotNone(s.lookup_permit("0001"))
            body = json.dumps({"username": "admin", "password": "admin-demo", "device_id": "desktop-admin"}).encode()
            req = urllib.request.Request(
                f"{server.url}/v1/auth/login", data=body, headers={"content-type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=30) as r:
                token = json.load(r)["access_token"]
            req = urllib.request.Request(
                f"{server.url}/v1/devices/{OFFICER[2]}/revoke",
                data=b"{}",
                headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=30) as r:
                self.assertEqual(r.status, 200)
            with self.assertRaises(tf.FiscalError.Revoked) as e:
                s.sync()
            self.assertIn("revogado", str(e.exception))
            with self.assertRaises(tf.FiscalError.RegistryMissing):
                s.lookup_permit("0001")


if __name__ == "__main__":
    unittest.main(verbosity=2)
