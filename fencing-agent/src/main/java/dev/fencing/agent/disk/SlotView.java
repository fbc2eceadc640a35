package dev.fencing.agent.disk;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.zip.CRC32;

/**
 * What this agent writes after the name in its own SBD node slot (offset {@value #OFFSET}; sbd reads only the in-use
 * byte and the name, so {@code sbd list/dump/message} keep working). Members are named by their slot index, so a view
 * fits one 512-byte sector for any group sbd can hold. Protected by a CRC32: a torn or foreign write reads as "no
 * view", never as a wrong one.
 *
 * <pre>
 * 0   "FADV"            4  magic
 * 4   version = 1       1
 * 5   flags             1  bit 0 quorum held; bits 1-2 claim state (0 none, 1 claiming, 2 held)
 * 6   reserved          2
 * 8   generation        8  +1 on every write; readers judge freshness by seeing it change on their own clock
 * 16  revision          8  the group configuration revision the writer runs
 * 24  expected          2  expected members as the writer knows them
 * 26  confirmed        32  bitmap of slots with a confirmed round trip in the writer's quorum window
 * 58  heard            32  bitmap of slots whose heartbeats the writer received recently (cut-off detection)
 * 90  claim side       32  bitmap of the side the writer claims or holds a tie for
 * 122 crc32             4  over bytes 0..121
 * </pre>
 *
 * @param generation write counter
 * @param quorumHeld the writer holds quorum (its network view)
 * @param revision the writer's configuration revision
 * @param expected expected members as the writer knows them
 * @param confirmed slots with a confirmed round trip
 * @param heard slots heard from recently
 * @param claim the writer's tie claim
 * @param claimSide the side claimed (empty with {@link ClaimState#NONE})
 */
public record SlotView(long generation, boolean quorumHeld, long revision, int expected, SortedSet<Integer> confirmed,
    SortedSet<Integer> heard, ClaimState claim, SortedSet<Integer> claimSide) {

  /** Offset of the view inside the node slot sector: after sbd's in-use byte and 64-byte name, with room to spare. */
  public static final int OFFSET = 128;
  static final int LENGTH = 126;
  private static final byte[] MAGIC = "FADV".getBytes(StandardCharsets.US_ASCII);
  private static final int BITMAP = 32;

  /** The writer's part in a tie: none, claiming (not yet won), or held (won, renewed with every write). */
  public enum ClaimState {
    NONE,
    CLAIMING,
    HELD
  }

  public SlotView {
    confirmed = checked(confirmed, "confirmed");
    heard = checked(heard, "heard");
    Objects.requireNonNull(claim, "claim");
    claimSide = checked(claimSide, "claimSide");
    if ((claim == ClaimState.NONE) != claimSide.isEmpty()) {
      throw new IllegalArgumentException("a claim needs a side and only a claim has one: " + claim + " " + claimSide);
    }
    if (expected < 0 || expected > 0xFFFF) {
      throw new IllegalArgumentException("expected out of range: " + expected);
    }
  }

  private static SortedSet<Integer> checked(SortedSet<Integer> slots, String what) {
    for (int s : slots) {
      if (s < 0 || s > 255) {
        throw new IllegalArgumentException(what + ": slot " + s + " is not 0..255");
      }
    }
    return Collections.unmodifiableSortedSet(new TreeSet<>(slots));
  }

  /** Writes the view into {@code slotSector} at {@link #OFFSET}. */
  void writeInto(byte[] slotSector) {
    ByteBuffer b = ByteBuffer.wrap(slotSector, OFFSET, LENGTH);
    b.put(MAGIC).put((byte) 1).put((byte) ((quorumHeld ? 1 : 0) | claim.ordinal() << 1)).putShort((short) 0);
    b.putLong(generation).putLong(revision).putShort((short) expected);
    b.put(bitmap(confirmed)).put(bitmap(heard)).put(bitmap(claimSide));
    CRC32 crc = new CRC32();
    crc.update(slotSector, OFFSET, LENGTH - 4);
    b.putInt((int) crc.getValue());
  }

  /**
   * The view in a node slot sector, or null when there is none (a slot sbd allocated, another writer).
   *
   * @throws MalformedSectorException when the magic is there but the content is not a valid view
   */
  static SlotView readFrom(byte[] slotSector) throws MalformedSectorException {
    if (slotSector.length < OFFSET + LENGTH
        || !Arrays.equals(Arrays.copyOfRange(slotSector, OFFSET, OFFSET + 4), MAGIC)) {
      return null;
    }
    ByteBuffer b = ByteBuffer.wrap(slotSector);
    CRC32 crc = new CRC32();
    crc.update(slotSector, OFFSET, LENGTH - 4);
    if ((int) crc.getValue() != b.getInt(OFFSET + LENGTH - 4)) {
      throw new MalformedSectorException("slot view checksum mismatch (torn or foreign write)");
    }
    int version = b.get(OFFSET + 4) & 0xff;
    if (version != 1) {
      throw new MalformedSectorException("slot view version " + version + ", this agent reads version 1");
    }
    int flags = b.get(OFFSET + 5) & 0xff;
    int claimCode = (flags >> 1) & 3;
    if (claimCode > 2 || (flags & ~7) != 0) {
      throw new MalformedSectorException("slot view flags 0x" + Integer.toHexString(flags) + " undefined");
    }
    try {
      return new SlotView(b.getLong(OFFSET + 8), (flags & 1) != 0, b.getLong(OFFSET + 16),
          b.getShort(OFFSET + 24) & 0xffff, slots(slotSector, OFFSET + 26), slots(slotSector, OFFSET + 58),
          ClaimState.values()[claimCode], slots(slotSector, OFFSET + 90));
    } catch (IllegalArgumentException e) {
      throw new MalformedSectorException("slot view: " + e.getMessage());
    }
  }

  private static byte[] bitmap(SortedSet<Integer> slots) {
    byte[] bits = new byte[BITMAP];
    for (int s : slots) {
      bits[s >> 3] |= (byte) (1 << (s & 7));
    }
    return bits;
  }

  private static SortedSet<Integer> slots(byte[] sector, int offset) {
    SortedSet<Integer> out = new TreeSet<>();
    for (int i = 0; i < BITMAP * 8; i++) {
      if ((sector[offset + (i >> 3)] & (1 << (i & 7))) != 0) {
        out.add(i);
      }
    }
    return out;
  }
}
