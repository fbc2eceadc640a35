package dev.fencing.agent.disk;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * SBD's layout on a {@link BlockDevice}: create, read the header, read the slot table with mailboxes, write one slot
 * or mailbox. Blocking I/O: called only from the disk thread and from tests.
 */
public final class SbdDevice {

  private final BlockDevice device;

  public SbdDevice(BlockDevice device) {
    this.device = device;
  }

  /** The underlying device. */
  public BlockDevice device() {
    return device;
  }

  /** Writes a fresh header and empty slots and mailboxes, as {@code sbd create} does. */
  public SbdHeader create(UUID uuid) throws IOException {
    SbdHeader header = SbdHeader.withDefaults(device.sectorSize(), uuid);
    device.write(1, new byte[(int) (header.layoutBytes() - header.sectorSize())]);
    device.write(0, header.encode());
    return header;
  }

  /** Reads and validates sector 0. */
  public SbdHeader readHeader() throws IOException, MalformedSectorException {
    return SbdHeader.decode(device.read(0, 1), device.sectorSize());
  }

  /**
   * Reads slots {@code 0..count-1} and their mailboxes in one request.
   *
   * @return one entry per slot, in slot order
   */
  public List<SlotRecord> readSlots(SbdHeader header, int count) throws IOException, MalformedSectorException {
    int n = Math.min(count, header.slots());
    byte[] all = device.read(header.slotSector(0), 2 * n);
    int size = header.sectorSize();
    List<SlotRecord> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      byte[] slot = new byte[size];
      byte[] mailbox = new byte[size];
      System.arraycopy(all, 2 * i * size, slot, 0, size);
      System.arraycopy(all, (2 * i + 1) * size, mailbox, 0, size);
      SbdSlot.Decoded decoded = SbdSlot.decode(slot);
      out.add(new SlotRecord(i, decoded.slot(), decoded.viewProblem(), SbdMailbox.decode(mailbox)));
    }
    return out;
  }

  /** Writes node slot {@code index}. */
  public void writeSlot(SbdHeader header, int index, SbdSlot slot) throws IOException {
    device.write(header.slotSector(index), slot.encode(header.sectorSize()));
  }

  /** Writes the mailbox of slot {@code index}. */
  public void writeMailbox(SbdHeader header, int index, SbdMailbox mailbox) throws IOException {
    device.write(header.mailboxSector(index), mailbox.encode(header.sectorSize()));
  }

  /**
   * @param index the slot number ({@code sbd list}'s first column)
   * @param slot the node slot
   * @param viewProblem why the owner's view could not be read, if it could not
   * @param mailbox its mailbox
   */
  public record SlotRecord(int index, SbdSlot slot, Optional<String> viewProblem, SbdMailbox mailbox) {}
}
