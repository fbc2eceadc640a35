package dev.fencing.agent.disk;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * Sector 0 of an SBD device: magic {@code "SBD_SBD_"}, version 2, the slot count (u8), the sector size and four
 * timeouts in seconds (u32, network byte order, at the offsets a C compiler gives sbd's header struct), minor version
 * 1 and a 16-byte UUID. Node slot {@code n} is sector {@code 1 + 2n}, its mailbox sector {@code 2 + 2n}.
 *
 * @param slots number of node slots, 1..255
 * @param sectorSize bytes per sector (512 or 4096), the device's logical block size
 * @param watchdogTimeout sbd's {@code -1}, seconds
 * @param allocateTimeout sbd's {@code -2}: how long an allocator waits before checking that it owns the slot
 * @param loopTimeout sbd's {@code -3}, seconds
 * @param msgwaitTimeout sbd's {@code -4}: after writing a message, the sender waits this long before it counts as
 *     delivered
 * @param minorVersion 1 (with UUID) or 0
 * @param uuid the device's identity
 */
public record SbdHeader(int slots, int sectorSize, long watchdogTimeout, long allocateTimeout, long loopTimeout,
    long msgwaitTimeout, int minorVersion, UUID uuid) {

  static final byte[] MAGIC = "SBD_SBD_".getBytes(StandardCharsets.US_ASCII);
  static final int VERSION = 2;
  /** sbd's default slot count. */
  public static final int DEFAULT_SLOTS = 255;

  public SbdHeader {
    if (slots < 1 || slots > 255) {
      throw new IllegalArgumentException("slots must be 1..255, got " + slots);
    }
    if (sectorSize != 512 && sectorSize != 1024 && sectorSize != 2048 && sectorSize != 4096) {
      throw new IllegalArgumentException("sector size must be 512, 1024, 2048 or 4096, got " + sectorSize);
    }
    for (long t : new long[] {watchdogTimeout, allocateTimeout, loopTimeout, msgwaitTimeout}) {
      if (t < 0 || t > 0xFFFF_FFFFL) {
        throw new IllegalArgumentException("timeout out of range: " + t);
      }
    }
    Objects.requireNonNull(uuid, "uuid");
  }

  /** A header with sbd's {@code create} defaults (watchdog 5 s, allocate 2 s, loop 1 s, msgwait 10 s). */
  public static SbdHeader withDefaults(int sectorSize, UUID uuid) {
    return new SbdHeader(DEFAULT_SLOTS, sectorSize, 5, 2, 1, 10, 1, uuid);
  }

  /** Sector of node slot {@code slot}. */
  public long slotSector(int slot) {
    return 1L + 2L * slot;
  }

  /** Sector of the mailbox of node slot {@code slot}. */
  public long mailboxSector(int slot) {
    return 2L + 2L * slot;
  }

  /** Bytes the layout occupies: the header and every slot with its mailbox. */
  public long layoutBytes() {
    return (1L + 2L * slots) * sectorSize;
  }

  /** The header sector. */
  public byte[] encode() {
    ByteBuffer b = ByteBuffer.allocate(sectorSize);
    b.put(MAGIC).put((byte) VERSION).put((byte) slots).putShort((short) 0);
    b.putInt(sectorSize).putInt((int) watchdogTimeout).putInt((int) allocateTimeout).putInt((int) loopTimeout)
        .putInt((int) msgwaitTimeout);
    b.put((byte) minorVersion);
    b.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
    return b.array();
  }

  /**
   * Decodes sector 0 as sbd validates it: magic, version 2 and a sector size equal to the device's.
   *
   * @param deviceSectorSize the device's logical block size
   * @throws MalformedSectorException saying what is wrong (not an SBD device, other version, other sector size)
   */
  public static SbdHeader decode(byte[] sector, int deviceSectorSize) throws MalformedSectorException {
    if (sector.length < 49) {
      throw new MalformedSectorException("header sector too short: " + sector.length + " bytes");
    }
    if (!Arrays.equals(Arrays.copyOf(sector, MAGIC.length), MAGIC)) {
      throw new MalformedSectorException("no SBD header (magic is not SBD_SBD_); prepare the device with"
          + " 'sbd -d DEVICE -4 90 create' (msgwait 90s covers the default timings, see Choosing msgwait in the"
          + " fencing-agent README)");
    }
    ByteBuffer b = ByteBuffer.wrap(sector);
    int version = b.get(8) & 0xff;
    if (version != VERSION) {
      throw new MalformedSectorException("SBD header version " + version + ", this agent reads version 2");
    }
    int slots = b.get(9) & 0xff;
    long size = Integer.toUnsignedLong(b.getInt(12));
    if (size != deviceSectorSize) {
      throw new MalformedSectorException("SBD header sector size " + size + " differs from the device's "
          + deviceSectorSize);
    }
    if (slots == 0) {
      throw new MalformedSectorException("SBD header has 0 slots");
    }
    UUID uuid = new UUID(b.getLong(33), b.getLong(41));
    try {
      return new SbdHeader(slots, (int) size, Integer.toUnsignedLong(b.getInt(16)), Integer.toUnsignedLong(b.getInt(20)),
          Integer.toUnsignedLong(b.getInt(24)), Integer.toUnsignedLong(b.getInt(28)), b.get(32) & 0xff, uuid);
    } catch (IllegalArgumentException e) {
      throw new MalformedSectorException("SBD header: " + e.getMessage());
    }
  }
}
