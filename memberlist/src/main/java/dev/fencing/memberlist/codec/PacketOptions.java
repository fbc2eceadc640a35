package dev.fencing.memberlist.codec;

import java.nio.charset.StandardCharsets;

/**
 * Settings shared by {@link PacketCodec} and {@link StreamCodec}, mirroring memberlist's Config fields.
 *
 * @param keyring encryption keys, or null for no encryption ({@code SecretKey}/{@code Keyring})
 * @param label cluster label, "" for none ({@code Label}; memberlist ≥ 0.3 only, so "" to talk to 0.2.2 peers)
 * @param verifyIncoming reject unencrypted input when a keyring is set ({@code GossipVerifyIncoming})
 * @param encryptOutgoing encrypt output when a keyring is set ({@code GossipVerifyOutgoing})
 * @param encryptionVersion 1 normally; 0 only for a node running protocol version 1
 * @param skipInboundLabelCheck {@code SkipInboundLabelCheck}: input carries no label header (something in front of
 *     this node removed it) and is treated as if it carried {@code label}, which stays the encryption's associated
 *     data; input that still carries a label header is refused (memberlist calls it a double label). Output is
 *     labelled as usual.
 */
public record PacketOptions(
    Keyring keyring,
    String label,
    boolean verifyIncoming,
    boolean encryptOutgoing,
    int encryptionVersion,
    boolean skipInboundLabelCheck) {

  /** Label length limit: the label header stores it in one byte. */
  public static final int MAX_LABEL_LENGTH = 255;

  /** Validates the label (at most 255 UTF-8 bytes) and the encryption version. */
  public PacketOptions {
    label = label == null ? "" : label;
    if (label.getBytes(StandardCharsets.UTF_8).length > MAX_LABEL_LENGTH) {
      throw new IllegalArgumentException("label must be at most 255 bytes, got \"" + label + "\"");
    }
    if (encryptionVersion != Keyring.VERSION_0 && encryptionVersion != Keyring.VERSION_1) {
      throw new IllegalArgumentException("encryption version must be 0 or 1, got " + encryptionVersion);
    }
  }

  /** Options that check inbound labels, as memberlist does by default. */
  public PacketOptions(
      Keyring keyring, String label, boolean verifyIncoming, boolean encryptOutgoing, int encryptionVersion) {
    this(keyring, label, verifyIncoming, encryptOutgoing, encryptionVersion, false);
  }

  /** Options sending encryption version 1, as every node at the default protocol version does. */
  public PacketOptions(Keyring keyring, String label, boolean verifyIncoming, boolean encryptOutgoing) {
    this(keyring, label, verifyIncoming, encryptOutgoing, Keyring.VERSION_1);
  }

  /** No encryption, no label: what a default 0.2.2 peer speaks. */
  public static PacketOptions plain() {
    return new PacketOptions(null, "", true, true);
  }

  /** Whether output is encrypted. */
  public boolean encrypting() {
    return keyring != null && encryptOutgoing;
  }

  byte[] labelBytes() {
    return label.getBytes(StandardCharsets.UTF_8);
  }
}
