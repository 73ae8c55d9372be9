// The app's side of the keystore callback (`SecretStore`), as a test implements it: in memory,
// one per database file. A real app implements the same three calls on the Android Keystore
// (docs/mobile.md). Implemented here in Kotlin, not taken from the library's
// `memorySecretStore()`, so that the programs cross the callback interface for real.

import br.gov.americana.taxifiscal.SecretStore
import java.util.concurrent.ConcurrentHashMap

class MemoryKeystore : SecretStore {
    private val entries = ConcurrentHashMap<String, ByteArray>()

    /** Names held, sorted: what a program checks. */
    fun names(): List<String> = entries.keys.sorted()

    override fun load(name: String): ByteArray? = entries[name]?.copyOf()

    override fun save(name: String, value: ByteArray) {
        entries[name] = value.copyOf()
    }

    override fun delete(name: String) {
        entries.remove(name)
    }
}
