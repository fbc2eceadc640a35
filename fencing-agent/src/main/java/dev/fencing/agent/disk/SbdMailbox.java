package dev.fencing.agent.disk;

import java.util.Objects;
import java.util.Optional;

/**
 * A node's mailbox sector: a signed command byte, then the sender's name (64 bytes, NUL-terminated).
 *
 * @param code the raw command byte (see {@link SbdCommand}; sbd defines 0..5)
 * @param from the sender's name as written (sbd writes the sending host's uname)
 */
public record SbdMailbox(int code, String from) {

  public SbdMailbox {
    Objects.requireNonNull(from, "from");
  }

  /** A message from {@code from}. */
  public static SbdMailbox of(SbdCommand command, String from) {
    SbdNames.encodable(from);
    return new SbdMailbox(command.code(), from);
  }

  /** The command, if the code is one sbd defines. */
  public Optional<SbdCommand> command() {
    return SbdCommand.fromCode(code);
  }

  /** The mailbox sector. */
  public byte[] encode(int sectorSize) {
    byte[] sector = new byte[sectorSize];
    sector[0] = (byte) code;
    SbdNames.write(sector, 1, from);
    return sector;
  }

  /** Decodes a mailbox sector; any byte pattern is a mailbox (unknown codes are kept and reported, not acted on). */
  public static SbdMailbox decode(byte[] sector) throws MalformedSectorException {
    if (sector.length < 65) {
      throw new MalformedSectorException("mailbox sector too short: " + sector.length + " bytes");
    }
    return new SbdMailbox(sector[0], SbdNames.read(sector, 1));
  }

  /** "reset from vm", "unknown code 9 from x": for status and logs. */
  public String describe() {
    return command().map(SbdCommand::sbdName).orElse("unknown code " + code) + (from.isEmpty() ? "" : " from "
        + from);
  }
}
