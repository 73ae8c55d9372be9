// The coroutine API (ffi/kotlin/TaxiFiscalCoroutines.kt) against a real taxi-fiscal server, as an
// Android app written with kotlinx.coroutines uses it — over HTTPS with the city's CA when
// TAXI_FISCAL_CA_FILE names one. Run by scripts/test-ffi:
//
//   TAXI_FISCAL_URL=https://127.0.0.1:PORT TAXI_FISCAL_CA_FILE=ca.pem \
//     java -Djna.library.path=DIR -cp app.jar:jna.jar:kotlin-stdlib.jar:kotlinx-coroutines-core-jvm.jar CoroutinesKt DB
//
// Exits with status 1 (an uncaught exception) at the first expectation that fails.

import java.io.File
import kotlinx.coroutines.cancel
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import br.gov.americana.taxifiscal.*

private fun check(condition: Boolean, what: () -> String) {
    if (!condition) throw AssertionError(what())
}

fun main(args: Array<String>) = runBlocking {
    val url = System.getenv("TAXI_FISCAL_URL") ?: throw AssertionError("TAXI_FISCAL_URL not set")
    val db = args.firstOrNull() ?: throw AssertionError("usage: CoroutinesKt DB_PATH")
    val ca = System.getenv("TAXI_FISCAL_CA_FILE")?.let { File(it).readText() }
    if (ca != null) check(url.startsWith("https://")) { "a CA was given for $url" }

    FieldSession.open(db, url, "tablet-fiscal-01", MemoryKeystore(), SessionOptions(extraCaPem = ca)).use { session ->
        val client = FieldClient(session)
        val login = client.login("fiscal", "fiscal-demo")
        check(login.role == "officer") { "role ${login.role}" }

        // A sync whose collector goes away at its first step: the sync is cancelled with it.
        val seen = mutableListOf<SyncEvent>()
        val cancelled = launch {
            client.syncProgress().collect { e ->
                seen.add(e)
                if (e is SyncEvent.Progress) cancel()
            }
        }
        cancelled.join()
        check(cancelled.isCancelled) { "the collector's job was not cancelled" }
        // Events already queued when it left may still be handed over; the end never is.
        val first = (seen.first() as? SyncEvent.Progress)?.progress
        check(first != null && first.step == SyncStep.SESSION && first.stepIndex == 1 && first.stepCount == 5) {
            "seen $seen"
        }
        check(seen.none { it is SyncEvent.Done }) { "a cancelled sync ran to its end: $seen" }

        // A suspend call cancelled by its caller ends at once.
        val call = launch { client.pullRegistry() }
        yield()
        call.cancel()
        call.join()
        check(call.isCancelled) { "pullRegistry was not cancelled" }

        // The next sync runs whole: every step in order, then the report.
        val all = client.syncProgress().toList()
        val steps = all.filterIsInstance<SyncEvent.Progress>().map { it.progress.step }.distinct()
        check(steps == listOf(SyncStep.SESSION, SyncStep.NUMBERS, SyncStep.RECORDS,
            SyncStep.PHOTOS, SyncStep.REGISTRY)) { "steps $steps" }
        val done = all.last() as? SyncEvent.Done ?: throw AssertionError("no Done: $all")
        check(done.report.ok) { "problems: ${done.report.problems}" }
        check(session.lookupPermit("0001") != null) { "no registry after the sync" }
        // The registry came down in this sync: the last progress counted its bytes.
        val lastOfFirst = (all[all.size - 2] as SyncEvent.Progress).progress
        check(lastOfFirst.bytesReceived == done.report.bytesDown && lastOfFirst.bytesReceived > 0) {
            "$lastOfFirst vs ${done.report.bytesDown}"
        }

        // An auto with three photos of different sizes, then a sync with a progress bar: one
        // event per photo, bytes growing, and the last one at the totals.
        val p1 = session.lookupPermit("0001") ?: throw AssertionError("permit 0001 missing")
        val auto = session.startInfraction(InfractionInput(
            vehicle = VehicleQuery.Plate(p1.plate), driver = p1.holder.cpf,
            facts = "Taxímetro sem lacre", extraRules = listOf("R02"), confirmVehicle = true,
        ))
        val sizes = listOf(3000, 12000, 700)
        sizes.forEachIndexed { i, n -> session.attachPhoto(auto.id, ByteArray(n) { (it * (i + 3) % 251).toByte() }) }
        session.issueRecord(auto.id, SignatureInput.Missing("condutor ausente"))
        val events = client.syncProgress().toList()
        val report = (events.last() as? SyncEvent.Done)?.report ?: throw AssertionError("no Done: $events")
        check(report.ok && report.photosUploaded == 3L) { "$report" }
        val progress = events.filterIsInstance<SyncEvent.Progress>().map { it.progress }
        val photoSteps = progress.filter { it.step == SyncStep.PHOTOS }
        check(photoSteps.first().photosDone == 0L && photoSteps.all { it.photosTotal == 3L }) { "$photoSteps" }
        check(photoSteps.all { it.photoBytesTotal == sizes.sum().toLong() }) { "$photoSteps" }
        // The step's start, then one event per photo, each with more photo bytes done.
        check(photoSteps.size == 1 + sizes.size) { "photo events $photoSteps" }
        check(photoSteps.map { it.photosDone } == listOf(0L, 1L, 2L, 3L)) { "$photoSteps" }
        check(photoSteps.zipWithNext().all { (a, b) -> b.photoBytesDone > a.photoBytesDone && b.bytesSent > a.bytesSent }) {
            "$photoSteps"
        }
        // Bytes on the wire never go down; the last progress is the report's.
        check(progress.zipWithNext().all { (a, b) -> b.bytesSent >= a.bytesSent && b.bytesReceived >= a.bytesReceived }) {
            "$progress"
        }
        val last = progress.last()
        check(last.photosDone == last.photosTotal && last.photoBytesDone == last.photoBytesTotal) { "$last" }
        check(last.recordsDone == 1L && last.recordsTotal == 1L && report.recordsSent == 1L) { "$last" }
        check(last.bytesSent == report.bytesUp && last.bytesSent > sizes.sum()) { "$last vs ${report.bytesUp}" }

        // And a plain suspend sync, as a background worker would run it.
        val again = client.sync()
        check(again.ok && again.status.pendingRecords == 0L) { "$again" }
        println("Kotlin (corrotinas${if (ca != null) ", HTTPS com a CA da cidade" else ""}): OK")
    }
}
