// The officer's main flow through the generated Kotlin bindings (br.gov.americana.taxifiscal), against a
// real taxi-fiscal server: what the Android app does, minus the screens. Run by scripts/test-ffi:
//
//   kotlinc -cp jna.jar taxi_fiscal.kt Main.kt -d app.jar
//   TAXI_FISCAL_URL=http://127.0.0.1:PORT java -Djna.library.path=DIR -cp app.jar:jna.jar:kotlin-stdlib.jar MainKt DB
//
// Exits with status 1 (an uncaught exception) at the first expectation that fails.

import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.concurrent.thread
import br.gov.americana.taxifiscal.*

fun expect(condition: Boolean, what: () -> String) {
    if (!condition) throw AssertionError(what())
}

/** Progress as the app would show it (step i of n, photos and bytes), on the syncing thread. */
class Progress : SyncListener {
    val seen = CopyOnWriteArrayList<SyncProgress>()
    val threads = CopyOnWriteArrayList<Long>()
    override fun onProgress(progress: SyncProgress) {
        seen.add(progress)
        threads.add(Thread.currentThread().id)
        with(progress) {
            println("  sincronizando: passo $stepIndex de $stepCount ($step): registros $recordsDone/$recordsTotal, " +
                "fotos $photosDone/$photosTotal ($photoBytesDone/$photoBytesTotal bytes), $bytesSent bytes enviados")
        }
    }
}

/** GET as the office user, through the server's HTTP API. */
fun officeGet(url: String, path: String): String {
    val http = HttpClient.newHttpClient()
    val login = HttpRequest.newBuilder(URI.create("$url/v1/auth/login"))
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(
            """{"username":"escritorio","password":"escritorio-demo","device_id":"desktop-escritorio"}"""))
        .build()
    val body = http.send(login, HttpResponse.BodyHandlers.ofString()).body()
    val token = Regex("\"access_token\":\"([^\"]+)\"").find(body)?.groupValues?.get(1)
        ?: throw AssertionError("office login failed: $body")
    val get = HttpRequest.newBuilder(URI.create("$url$path"))
        .header("authorization", "Bearer $token").GET().build()
    val response = http.send(get, HttpResponse.BodyHandlers.ofString())
    expect(response.statusCode() == 200) { "GET $path: ${response.statusCode()} ${response.body()}" }
    return response.body()
}

fun main(args: Array<String>) {
    val url = System.getenv("TAXI_FISCAL_URL") ?: throw AssertionError("TAXI_FISCAL_URL not set")
    val db = args.firstOrNull() ?: throw AssertionError("usage: MainKt DB_PATH")

    // The app's keystore, implemented in Kotlin (Keystore.kt): the library keeps the database
    // key, the device's signing key and the tokens there.
    val keystore = MemoryKeystore()
    FieldSession.open(db, url, "tablet-fiscal-01", keystore).use { session ->
        // Network calls run off the main thread in the app (Dispatchers.IO); here, plainly.
        val login = session.login("fiscal", "fiscal-demo")
        expect(login.role == "officer") { "role ${login.role}" }
        expect(keystore.names() == listOf("database-key", "device-signing-key", "session-tokens")) {
            "keystore holds ${keystore.names()}"
        }
        val pulled = session.pullRegistry()
        expect(pulled.mode == RegistryUpdateMode.SNAPSHOT && pulled.version >= 1L) { "$pulled" }

        // Look-ups, offline.
        val p3 = session.lookupPermit("0003") ?: throw AssertionError("permit 0003 missing")
        expect(p3.auxiliaries.size == 2) { "auxiliaries of 0003: ${p3.auxiliaries.size}" }
        val p1 = session.lookupPermit("0001") ?: throw AssertionError("permit 0001 missing")
        expect(session.lookupPlate(p1.plate)?.permitNumber == "0001") { "plate lookup" }
        val aux = p3.auxiliaries[0]

        // Art. 8: an auxiliary of permit 0003 driving the taxi of 0001.
        val verdict = session.check(CheckRequest(vehicle = VehicleQuery.Plate(p1.plate), driver = aux.cpf))
        expect(verdict.overall == Overall.IRREGULAR) { "overall ${verdict.overall}" }
        expect(verdict.driverRole == DriverRole.AUXILIARY_OF_ANOTHER_PERMIT) { "role ${verdict.driverRole}" }
        val r14 = verdict.findings.single { it.ruleId == "R14" }
        expect(r14.citation.contains("art. 8")) { r14.citation }
        expect(verdict.registry.version == pulled.version && verdict.registry.ageSeconds != null) {
            "${verdict.registry}"
        }
        println("verificação: ${verdict.overall} — ${r14.ruleId} ${r14.citation}: ${r14.message}")

        // The auto, offline, with a photo, issued.
        val draft = session.startInfraction(InfractionInput(
            vehicle = VehicleQuery.Plate(p1.plate),
            driver = aux.cpf,
            position = Position(lat = -22.7395, lon = -47.3317, accuracyM = 8.0),
            witnesses = listOf(WitnessInput(name = "Maria Souza", statement = "Vi o condutor")),
        ))
        expect(draft.status == RecordStatus.DRAFT) { "${draft.status}" }
        val photo = session.attachPhoto(draft.id, ByteArray(2048) { (it % 251).toByte() })
        expect(photo.sha256.length == 64) { photo.sha256 }
        // Not issued until the officer confirms the vehicle the lookup found.
        try {
            session.issueRecord(draft.id, SignatureInput.Missing("recusou-se a assinar"))
            throw AssertionError("issued without confirming the vehicle")
        } catch (e: FiscalException.InvalidInput) {
            expect(e.field == "vehicle_confirmation") { "field ${e.field}" }
        }
        session.confirmVehicle(draft.id)
        expect(session.showRecord(draft.id).vehicleConfirmation?.plate == p1.plate) { "confirmation" }
        val issued = session.issueRecord(draft.id, SignatureInput.Missing("recusou-se a assinar"))
        expect(issued.sealed && issued.status == RecordStatus.ISSUED) { "$issued" }

        // Printed offline: ESC/POS for a thermal printer (two copies), or a PDF.
        for (format in listOf(PrintFormat.ESC_POS58, PrintFormat.ESC_POS80)) {
            val paper = session.renderRecord(draft.id, format)
            expect(paper.size > 2 && paper[0] == 0x1b.toByte() && paper[1] == '@'.code.toByte()) { "$format: no ESC @" }
            val text = String(paper, Charsets.ISO_8859_1)
            expect(text.contains(p1.plate) && text.contains("VIA DO AUTUADO")) { "$format: plate or copy missing" }
        }
        for (format in listOf(PrintFormat.PDF, PrintFormat.PDF_RECEIPT)) {
            val paper = session.renderRecord(draft.id, format)
            expect(String(paper.copyOfRange(0, 4), Charsets.ISO_8859_1) == "%PDF") { "$format: not a PDF" }
        }
        expect(session.syncStatus().pendingRecords == 1L) { "pending before sync" }

        // Errors are exceptions with the fields the app acts on.
        try {
            session.setFacts(draft.id, "outra versão")
            throw AssertionError("a sealed field was changed")
        } catch (e: FiscalException.InvalidInput) {
            expect(e.field == "facts") { "field ${e.field}" }
        }
        try {
            session.lookupPlate("XYZ")
            throw AssertionError("a bad plate was accepted")
        } catch (e: FiscalException.InvalidInput) {
            expect(e.field == "plate") { "field ${e.field}" }
        }

        // The sync on a background thread, as the app does it.
        val progress = Progress()
        var report: SyncReport? = null
        var failure: Throwable? = null
        val worker = thread { try { report = session.sync(progress) } catch (e: Throwable) { failure = e } }
        worker.join(120_000)
        expect(!worker.isAlive) { "sync did not finish within 120 s" }
        failure?.let { throw it }
        val done = report ?: throw AssertionError("no report")
        expect(done.ok) { "problems: ${done.problems}" }
        val steps = progress.seen.map { it.step }.distinct()
        expect(steps == listOf(SyncStep.SESSION, SyncStep.NUMBERS, SyncStep.RECORDS,
            SyncStep.PHOTOS, SyncStep.REGISTRY)) { "steps $steps" }
        expect(progress.seen.all { it.stepCount == 5 && it.stepIndex == it.step.ordinal + 1 }) { "${progress.seen}" }
        expect(progress.threads.all { it == worker.id }) { "progress called off the syncing thread" }
        expect(done.recordsAcknowledged == 1L && done.photosUploaded == 1L) { "$done" }
        // The one photo attached is the photos step's total, and the last event is at the totals.
        expect(progress.seen.filter { it.step == SyncStep.PHOTOS }.all {
            it.photosTotal == 1L && it.photoBytesTotal == 2048L
        }) { "${progress.seen}" }
        val last = progress.seen.last()
        expect(last.recordsDone == 1L && last.recordsTotal == 1L) { "$last" }
        expect(last.photosDone == 1L && last.photoBytesDone == 2048L) { "$last" }
        expect(progress.seen.zipWithNext().all { (a, b) -> b.bytesSent >= a.bytesSent }) { "${progress.seen}" }
        expect(last.bytesSent == done.bytesUp && last.bytesSent > 2048L) { "$last vs ${done.bytesUp}" }
        expect(done.status.pendingRecords == 0L) { "pending after sync" }
        val number = session.showRecord(draft.id).number ?: throw AssertionError("no auto number after sync")
        println("sincronizado: auto nº $number, ${done.bytesUp} bytes enviados")

        // The office sees it.
        val page = officeGet(url, "/v1/records?plate=${p1.plate}")
        expect(page.contains("\"id\":\"${draft.id}\"")) { "record not on the server: $page" }
        expect(page.contains("\"number\":\"$number\"")) { "number not on the server: $page" }
        println("no servidor: ${draft.id} (auto nº $number)")
    }
    println("Kotlin: OK")
}
