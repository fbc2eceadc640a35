package dev.fencing.agent.disk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class SbdCodecTest {

  // The first 49 bytes of a header written by Debian's sbd 1.5.2 ('sbd -d /dev/loop0 create'), from hexdump.
  private static final String SBD_HEADER = "5342445f5342445f02ff000000000200000000050000000200000001"
      + "0000000a012dd88389b3074df9bf10726e088ececd";

  @Test
  void decodesAHeaderWrittenBySbd() throws Exception {
    byte[] sector = new byte[512];
    byte[] head = HexFormat.of().parseHex(SBD_HEADER);
    System.arraycopy(head, 0, sector, 0, head.length);

    SbdHeader header = SbdHeader.decode(sector, 512);

    assertEquals(new SbdHeader(255, 512, 5, 2, 1, 10, 1,
        UUID.fromString("2dd88389-b307-4df9-bf10-726e088ececd")), header);
    assertArrayEquals(sector, header.encode());
    assertEquals(1, header.slotSector(0));
    assertEquals(6, header.mailboxSector(2));
  }

  @Test
  void rejectsHeadersSbdWouldReject() {
    byte[] sector = SbdHeader.withDefaults(512, UUID.randomUUID()).encode();
    assertTrue(assertThrows(MalformedSectorException.class, () -> SbdHeader.decode(sector, 4096)).getMessage()
        .contains("sector size 512 differs"));
    sector[8] = 3;
    assertTrue(assertThrows(MalformedSectorException.class, () -> SbdHeader.decode(sector, 512)).getMessage()
        .contains("version 3"));
    assertTrue(assertThrows(MalformedSectorException.class, () -> SbdHeader.decode(new byte[512], 512))
        .getMessage().contains("'sbd -d DEVICE -4 90 create'"));
  }

  @Test
  void slotKeepsSbdFieldsAndCarriesTheView() throws Exception {
    SlotView view = new SlotView(42, true, 7, 4, new TreeSet<>(java.util.List.of(0, 1, 3)),
        new TreeSet<>(java.util.List.of(1)), SlotView.ClaimState.HELD, new TreeSet<>(java.util.List.of(0, 1)));
    byte[] sector = SbdSlot.owned("node-a", Optional.of(view)).encode(512);

    assertEquals(1, sector[0]);
    assertEquals("node-a\0", new String(sector, 1, 7, java.nio.charset.StandardCharsets.US_ASCII));
    SbdSlot.Decoded decoded = SbdSlot.decode(sector);
    assertEquals(Optional.of(view), decoded.slot().view());
    assertTrue(decoded.slot().ownedBy("NODE-A"));
  }

  @Test
  void aDamagedViewReadsAsNoViewWithTheReason() throws Exception {
    byte[] sector = SbdSlot.owned("node-a", Optional.of(new SlotView(1, false, 0, 2, new TreeSet<>(),
        new TreeSet<>(), SlotView.ClaimState.NONE, new TreeSet<>()))).encode(512);
    sector[SlotView.OFFSET + 10] ^= 1;

    SbdSlot.Decoded decoded = SbdSlot.decode(sector);

    assertEquals("node-a", decoded.slot().name());
    assertTrue(decoded.slot().view().isEmpty());
    assertTrue(decoded.viewProblem().orElseThrow().contains("checksum"));
  }

  @Test
  void mailboxRoundTripsAndKeepsUnknownCodes() throws Exception {
    byte[] sector = SbdMailbox.of(SbdCommand.RESET, "vm").encode(512);
    assertEquals(2, sector[0]);
    assertEquals(Optional.of(SbdCommand.RESET), SbdMailbox.decode(sector).command());
    sector[0] = 9;
    SbdMailbox unknown = SbdMailbox.decode(sector);
    assertTrue(unknown.command().isEmpty());
    assertEquals("unknown code 9 from vm", unknown.describe());
  }

  @Test
  void namesSbdCannotStoreAreRefused() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> SbdSlot.owned("x".repeat(64), Optional.empty()))
        .getMessage().contains("1..63"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> SbdSlot.owned("a b", Optional.empty()))
        .getMessage().contains("index 1"));
  }

  @Test
  void randomSectorsNeverThrowAnythingButMalformed() {
    Random random = new Random(14);
    for (int i = 0; i < 5000; i++) {
      byte[] sector = new byte[512];
      random.nextBytes(sector);
      if (i % 3 == 0) {
        System.arraycopy("FADV".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, sector, SlotView.OFFSET, 4);
      }
      if (i % 5 == 0) {
        System.arraycopy(SbdHeader.MAGIC, 0, sector, 0, 8);
        sector[8] = 2;
      }
      try {
        SbdHeader.decode(sector, 512);
      } catch (MalformedSectorException expected) {
        assertFalse(expected.getMessage().isBlank());
      }
      try {
        SbdSlot.decode(sector);
        SbdMailbox.decode(sector);
      } catch (MalformedSectorException e) {
        throw new AssertionError("a full sector always decodes, seed 14 i=" + i, e);
      }
    }
  }
}
