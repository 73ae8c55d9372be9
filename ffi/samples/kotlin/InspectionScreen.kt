// A sample screen model of the officer's core flow, for the app team (docs/mobile.md, "A sample
// screen"): type a plate and the driver's document → offline lookup and check → the verdict's
// findings (rule, citation, message) → start an auto → sync with progress and cancel, every
// error shown as a Portuguese sentence.
//
// Platform-neutral on purpose: no Android class, so that scripts/test-ffi compiles it against
// the AAR's classes (the generated bindings and FieldClient) with kotlinx-coroutines only — a
// change of the library's API that breaks what the docs show fails CI. On Android an
// AndroidViewModel owns it with its `viewModelScope` and Compose collects `state`
// (docs/mobile.md shows both).

package br.gov.americana.taxifiscal.samples

import br.gov.americana.taxifiscal.CheckRequest
import br.gov.americana.taxifiscal.FieldClient
import br.gov.americana.taxifiscal.FiscalException
import br.gov.americana.taxifiscal.InfractionInput
import br.gov.americana.taxifiscal.Overall
import br.gov.americana.taxifiscal.PermitInfo
import br.gov.americana.taxifiscal.Position
import br.gov.americana.taxifiscal.SavedRecord
import br.gov.americana.taxifiscal.Severity
import br.gov.americana.taxifiscal.SyncEvent
import br.gov.americana.taxifiscal.SyncProgress
import br.gov.americana.taxifiscal.SyncReport
import br.gov.americana.taxifiscal.SyncStep
import br.gov.americana.taxifiscal.Verdict
import br.gov.americana.taxifiscal.VehicleQuery
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.flow.update
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

/** The permit the plate belongs to, as the screen shows it. */
data class PermitUi(val number: String, val plate: String, val holder: String, val stand: String)

/** One finding of the check: what the officer reads, and whether it makes the taxi irregular. */
data class FindingUi(val ruleId: String, val citation: String, val message: String, val irregular: Boolean)

/** The verdict: a headline and its findings. */
data class VerdictUi(val overall: Overall, val headline: String, val findings: List<FindingUi>)

/** The sync button's state. */
sealed interface SyncUi {
    data object Idle : SyncUi

    /** Step `index` of `count` is running; `label` is for the officer ("Enviando registros 3/40"). */
    data class Running(val label: String, val index: Int, val count: Int) : SyncUi

    /** The last sync ended; `summary` is for the officer. */
    data class Finished(val summary: String) : SyncUi
}

/** Everything the screen draws: one immutable value, replaced on every change. */
data class InspectionState(
    val plate: String = "",
    val driver: String = "",
    val busy: Boolean = false,
    val permit: PermitUi? = null,
    val verdict: VerdictUi? = null,
    /** The record started from the last check, as "Auto nº 123" or "aguardando número". */
    val auto: String? = null,
    val sync: SyncUi = SyncUi.Idle,
    /** The error to show, in Portuguese. */
    val error: String? = null,
    /** The input to highlight (`InvalidInput.field`: `plate`, `driver`, …). */
    val invalidField: String? = null,
) {
    /** An auto is started from a check that found something irregular. */
    val canStartAuto: Boolean get() = verdict?.overall == Overall.IRREGULAR && auto == null && !busy
}

/**
 * The screen's model. `scope` is the platform's (Android: `viewModelScope`): when it ends, a
 * sync in progress is cancelled with it. Offline calls run on `local` (fast, but disk I/O:
 * never the main thread for writes); network calls go through [FieldClient], which runs them
 * on its own I/O dispatcher and cancels them with their coroutine.
 */
class InspectionScreen(
    private val client: FieldClient,
    private val scope: CoroutineScope,
    private val local: CoroutineDispatcher = Dispatchers.Default,
) {
    private val session = client.session
    private val mutableState = MutableStateFlow(InspectionState())
    val state: StateFlow<InspectionState> = mutableState.asStateFlow()
    private var syncJob: Job? = null

    fun onPlate(text: String) = mutableState.update {
        // A new plate is a new inspection: the previous verdict no longer applies.
        it.copy(plate = text, permit = null, verdict = null, auto = null, error = null, invalidField = null)
    }

    fun onDriver(text: String) = mutableState.update {
        it.copy(driver = text, verdict = null, auto = null, error = null, invalidField = null)
    }

    /** Offline lookup of the plate and check of the driver against it. */
    fun check() {
        val s = state.value
        offline {
            val permit = session.lookupPlate(s.plate)
            if (permit == null) {
                mutableState.update { it.copy(permit = null, verdict = null, error = "Placa ${s.plate} não consta do cadastro de táxis.") }
                return@offline
            }
            val verdict = session.check(CheckRequest(vehicle = VehicleQuery.Plate(s.plate), driver = s.driver))
            mutableState.update { it.copy(permit = permit.toUi(), verdict = verdict.toUi(), auto = null) }
        }
    }

    /**
     * Starts an auto de infração from the plate and driver just checked (the library runs the
     * check again and seals its verdict into the record). `monotonicMs`: the device's
     * monotonic clock (Android `SystemClock.elapsedRealtime()`), evidence of the time.
     */
    fun startAuto(position: Position? = null, monotonicMs: Long? = null) {
        val s = state.value
        offline {
            val saved = session.startInfraction(
                InfractionInput(
                    vehicle = VehicleQuery.Plate(s.plate),
                    driver = s.driver,
                    position = position,
                    monotonicMs = monotonicMs,
                ),
            )
            mutableState.update { it.copy(auto = saved.label()) }
        }
    }

    /** Syncs now, with each step as progress; a second tap while it runs does nothing. */
    fun sync() {
        if (syncJob?.isActive == true) return
        syncJob = scope.launch {
            mutableState.update { it.copy(error = null) }
            try {
                client.syncProgress().collect { e ->
                    when (e) {
                        is SyncEvent.Progress -> mutableState.update {
                            val p = e.progress
                            it.copy(sync = SyncUi.Running(p.label(), p.stepIndex, p.stepCount))
                        }
                        is SyncEvent.Done -> mutableState.update { it.copy(sync = SyncUi.Finished(e.report.summary())) }
                    }
                }
            } catch (e: CancellationException) {
                // The cancel button (or the scope ending): the library stopped the sync and
                // kept what it had applied. Say so, then let the cancellation go on.
                mutableState.update { it.copy(sync = SyncUi.Finished("Sincronização cancelada.")) }
                throw e
            } catch (e: FiscalException) {
                mutableState.update { it.copy(sync = SyncUi.Idle, error = e.forOfficer()) }
            }
        }
    }

    /** Cancels the sync started here (the library stops before its next request). */
    fun cancelSync() {
        syncJob?.cancel()
    }

    /** Runs an offline call on `local`, marking the screen busy and showing its error. */
    private fun offline(block: () -> Unit): Job = scope.launch {
        mutableState.update { it.copy(busy = true, error = null, invalidField = null) }
        try {
            withContext(local) { block() }
        } catch (e: FiscalException) {
            val field = (e as? FiscalException.InvalidInput)?.field
            mutableState.update { it.copy(error = e.forOfficer(), invalidField = field) }
        } finally {
            mutableState.update { it.copy(busy = false) }
        }
    }
}

/**
 * What the officer reads for an error: the library's own Portuguese sentence (`toString()`, the
 * error's exported `Display`; Kotlin's `message` is UniFFI's list of the fields, for logs), then
 * what to do next where that sentence does not say it. Exhaustive on purpose: a new case of the
 * library's error does not compile until someone decides what the officer is told.
 */
fun FiscalException.forOfficer(): String {
    val next = when (this) {
        is FiscalException.Offline -> "Nada se perdeu: tente de novo quando houver sinal."
        is FiscalException.LoginRequired -> "Entre de novo com usuário e senha."
        is FiscalException.RegistryMissing -> "Conecte-se à internet para baixar o cadastro."
        is FiscalException.Storage -> "Procure o suporte."
        is FiscalException.Untrusted -> "Avise a informática da Prefeitura."
        // The sentence is complete: the law's reason with rule and article, the server's
        // reason, the field's problem, the revocation with where to go.
        is FiscalException.RefusedByLaw,
        is FiscalException.RefusedByServer,
        is FiscalException.NotFound,
        is FiscalException.InvalidInput,
        is FiscalException.Cancelled,
        is FiscalException.Revoked,
        -> null
    }
    val sentence = toString().trim().trimEnd('.').replaceFirstChar(Char::uppercase) + "."
    return if (next == null) sentence else "$sentence $next"
}

private fun PermitInfo.toUi() = PermitUi(
    number = permitNumber,
    plate = plate,
    holder = holder.name,
    stand = stand.name,
)

private fun Verdict.toUi() = VerdictUi(
    overall = overall,
    headline = when (overall) {
        Overall.REGULAR -> "Regular"
        Overall.WARNING -> "Regular, com avisos"
        Overall.IRREGULAR -> "Irregular"
    },
    findings = findings.map {
        FindingUi(it.ruleId, it.citation, it.message, irregular = it.severity == Severity.IRREGULAR)
    },
)

private fun SavedRecord.label(): String = when (val n = number) {
    null -> "Auto salvo, aguardando número (${statusLabel})"
    else -> "Auto nº $n ($statusLabel)"
}

private fun SyncStep.label(): String = when (this) {
    SyncStep.SESSION -> "sessão"
    SyncStep.NUMBERS -> "números de auto"
    SyncStep.RECORDS -> "registros"
    SyncStep.PHOTOS -> "fotos"
    SyncStep.REGISTRY -> "cadastro"
}

/** The progress line: the step, and how far it is where it counts something. */
private fun SyncProgress.label(): String = when {
    step == SyncStep.RECORDS && recordsTotal > 0 -> "Enviando registros $recordsDone/$recordsTotal"
    step == SyncStep.PHOTOS && photosTotal > 0 -> "Enviando fotos $photosDone/$photosTotal"
    else -> "Sincronizando ${step.label()}…"
}

private fun SyncReport.summary(): String = buildString {
    append("Sincronizado: $recordsAcknowledged registro(s) enviado(s), $photosUploaded foto(s).")
    if (recordsRejected > 0) append(" $recordsRejected alteração(ões) recusada(s) pelo servidor.")
    problems.forEach { append(" ${it.step.label().replaceFirstChar(Char::uppercase)}: ${it.reason}") }
    if (status.pendingRecords > 0) append(" Pendentes: ${status.pendingRecords}.")
}
