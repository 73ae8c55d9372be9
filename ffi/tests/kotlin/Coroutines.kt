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

    FieldSession.open(db, url, "tablet-fiscal-01", SessionOptions(extraCaPem = ca)).use { session ->
        val client = FieldClient(session)
        val login = client.login("fiscal", "fiscal-demo")
        check(login.role == "officer") { "role ${login.role}" }

        // A sync whose collector goes away at its first step: the sync is cancelled with it.
        val seen = mutableListOf<SyncProgress>()
        val cancelled = launch {
            client.syncProgress().collect { p ->
                seen.add(p)
                if (p is SyncProgress.Step) cancel()
            }
        }
        cancelled.join()
        check(cancelled.isCancelled) { "the collector's job was not cancelled" }
        // Steps already queued when it left may still be handed over; the end never is.
        check((seen.first() as? SyncProgress.Step)?.index == 1) { "seen $seen" }
        check(seen.none { it is SyncProgress.Done }) { "a cancelled sync ran to its end: $seen" }

        // A suspend call cancelled by its caller ends at once.
        val call = launch { client.pullRegistry() }
        yield()
        call.cancel()
        call.join()
        check(call.isCancelled) { "pullRegistry was not cancelled" }

        // The next sync runs whole: every step, then the report.
        val all = client.syncProgress().toList()
        val steps = all.filterIsInstance<SyncProgress.Step>().map { it.step }
        check(steps == listOf(SyncStep.SESSION, SyncStep.NUMBERS, SyncStep.RECORDS,
            SyncStep.PHOTOS, SyncStep.REGISTRY)) { "steps $steps" }
        val done = all.last() as? SyncProgress.Done ?: throw AssertionError("no Done: $all")
        check(done.report.ok) { "problems: ${done.report.problems}" }
        check(session.lookupPermit("0001") != null) { "no registry after the sync" }

        // And a plain suspend sync, as a background worker would run it.
        val again = client.sync()
        check(again.ok && again.status.pendingRecords == 0L) { "$again" }
        println("Kotlin (corrotinas${if (ca != null) ", HTTPS com a CA da cidade" else ""}): OK")
    }
}
