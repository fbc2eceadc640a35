package dev.fencing.agent.disk;

import java.util.Objects;
import java.util.Optional;

/**
 * A node slot sector: sbd's in-use byte and 64-byte name, and this agent's {@link SlotView} when it wrote one.
 *
 * @param inUse the slot is allocated (sbd: any non-zero byte)
 * @param name the owner's name ("" when free)
 * @param view the owner's view, when it is an agent that writes one
 */
public record SbdSlot(boolean inUse, String name, Optional<SlotView> view) {

  public SbdSlot {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(view, "view");
  }

  /** An allocated slot owned by {@code name}. */
  public static SbdSlot owned(String name, Optional<SlotView> view) {
    SbdNames.encodable(name);
    return new SbdSlot(true, name, view);
  }

  /** True when this slot belongs to {@code node}: sbd compares names ignoring case. */
  public boolean ownedBy(String node) {
    return inUse && name.equalsIgnoreCase(node);
  }

  /** The node slot sector. */
  public byte[] encode(int sectorSize) {
    byte[] sector = new byte[sectorSize];
    sector[0] = (byte) (inUse ? 1 : 0);
    if (!name.isEmpty()) {
      SbdNames.write(sector, 1, name);
    }
    view.ifPresent(v -> v.writeInto(sector));
    return sector;
  }

  /**
   * Decodes a node slot sector. The in-use byte and name decode from any bytes, as sbd reads them; a damaged view
   * reads as no view ({@code viewProblem} says why), so one bad slot never hides the others.
   */
  public static Decoded decode(byte[] sector) throws MalformedSectorException {
    if (sector.length < 65) {
      throw new MalformedSectorException("slot sector too short: " + sector.length + " bytes");
    }
    boolean inUse = sector[0] != 0;
    String name = inUse ? SbdNames.read(sector, 1) : "";
    try {
      return new Decoded(new SbdSlot(inUse, name, Optional.ofNullable(SlotView.readFrom(sector))), Optional.empty());
    } catch (MalformedSectorException e) {
      return new Decoded(new SbdSlot(inUse, name, Optional.empty()), Optional.of(e.getMessage()));
    }
  }

  /**
   * @param slot the slot as read
   * @param viewProblem why a view that was there could not be read
   */
  public record Decoded(SbdSlot slot, Optional<String> viewProblem) {}
}
