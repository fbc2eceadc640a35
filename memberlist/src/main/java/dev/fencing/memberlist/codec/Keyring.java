package dev.fencing.memberlist.codec;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * memberlist's keyring: AES keys (16, 24 or 32 bytes) for AES-GCM, the first being the primary that encrypts; all
 * of them are tried, primary first, to decrypt. Thread-safe.
 *
 * <p>Ciphertext layout: {@code [vsn][12-byte random nonce][ciphertext + 16-byte tag]}. Version 0 PKCS7-pads the
 * plaintext to 16 bytes first (1..16 pad bytes); version 1 does not. Rotation is install everywhere, use everywhere,
 * then remove.
 */
public final class Keyring {
  /** Encryption version sent by default (memberlist protocol version ≥ 2). */
  public static final int VERSION_1 = 1;
  /** Legacy encryption version with PKCS7 padding (sent only by protocol version 1 nodes). */
  public static final int VERSION_0 = 0;

  static final int NONCE_SIZE = 12;
  /** Where the ciphertext starts in an encrypted message, and the plaintext after {@link #decryptInPlace}. */
  public static final int PLAINTEXT_OFFSET = 1 + NONCE_SIZE;
  static final int TAG_SIZE = 16;
  private static final int BLOCK_SIZE = 16;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String TRANSFORMATION = "AES/GCM/NoPadding";
  // One cipher per thread, initialised for every message: Cipher.getInstance (a provider lookup) cost more than
  // sealing or opening a gossip packet, and the cipher keeps the expanded key while the key stays the same. A Cipher
  // is not thread-safe; the few long-lived threads that encrypt or decrypt each keep their own.
  private static final ThreadLocal<Cipher> GCM = ThreadLocal.withInitial(Keyring::newCipher);

  private final Object lock = new Object();
  private List<byte[]> keys;

  /**
   * @param primaryKey the key used to encrypt
   * @param otherKeys additional decrypt-only keys
   * @throws IllegalArgumentException if a key is not 16, 24 or 32 bytes
   */
  public Keyring(byte[] primaryKey, byte[]... otherKeys) {
    List<byte[]> list = new ArrayList<>();
    list.add(validated(primaryKey));
    for (byte[] k : otherKeys) {
      if (indexOf(list, k) < 0) {
        list.add(validated(k));
      }
    }
    keys = List.copyOf(list);
  }

  private static byte[] validated(byte[] key) {
    if (key == null || (key.length != 16 && key.length != 24 && key.length != 32)) {
      throw new IllegalArgumentException(
          "key size must be 16, 24 or 32 bytes (AES-128/192/256), got " + (key == null ? "null" : key.length));
    }
    return key.clone();
  }

  private static int indexOf(List<byte[]> list, byte[] key) {
    for (int i = 0; i < list.size(); i++) {
      if (Arrays.equals(list.get(i), key)) {
        return i;
      }
    }
    return -1;
  }

  /** Adds a decrypt-only key (no-op if already present). */
  public void install(byte[] key) {
    byte[] k = validated(key);
    synchronized (lock) {
      if (indexOf(keys, k) < 0) {
        List<byte[]> next = new ArrayList<>(keys);
        next.add(k);
        keys = List.copyOf(next);
      }
    }
  }

  /**
   * Makes an installed key the primary (encrypting) key.
   *
   * @throws IllegalArgumentException if the key is not installed
   */
  public void use(byte[] key) {
    synchronized (lock) {
      int i = indexOf(keys, key);
      if (i < 0) {
        throw new IllegalArgumentException("requested key is not in the keyring; install it first");
      }
      List<byte[]> next = new ArrayList<>(keys);
      next.add(0, next.remove(i));
      keys = List.copyOf(next);
    }
  }

  /**
   * Removes a key (no-op if absent).
   *
   * @throws IllegalArgumentException for the primary key, which must first be replaced with {@link #use}
   */
  public void remove(byte[] key) {
    synchronized (lock) {
      int i = indexOf(keys, key);
      if (i == 0) {
        throw new IllegalArgumentException("removing the primary key is not allowed; use another key first");
      }
      if (i > 0) {
        List<byte[]> next = new ArrayList<>(keys);
        next.remove(i);
        keys = List.copyOf(next);
      }
    }
  }

  /** A copy of the primary key. */
  public byte[] primaryKey() {
    synchronized (lock) {
      return keys.get(0).clone();
    }
  }

  /** Copies of all keys, primary first. */
  public List<byte[]> keys() {
    List<byte[]> snapshot;
    synchronized (lock) {
      snapshot = keys;
    }
    List<byte[]> out = new ArrayList<>(snapshot.size());
    for (byte[] k : snapshot) {
      out.add(k.clone());
    }
    return out;
  }

  /** Bytes added by {@link #encrypt} for a plaintext of {@code length} bytes. */
  public static int overhead(int version, int length) {
    int padded = version == VERSION_0 ? BLOCK_SIZE - length % BLOCK_SIZE : 0;
    return 1 + NONCE_SIZE + padded + TAG_SIZE;
  }

  /**
   * Encrypts with the primary key and a random nonce.
   *
   * @param version {@link #VERSION_1} (normal) or {@link #VERSION_0} (legacy padding)
   * @param aad additional authenticated data (may be empty)
   */
  public byte[] encrypt(int version, byte[] plaintext, byte[] aad) {
    byte[] nonce = new byte[NONCE_SIZE];
    RANDOM.nextBytes(nonce);
    return encrypt(version, plaintext, aad, nonce);
  }

  /** Encrypts with a caller-chosen nonce (tests); never reuse a nonce with the same key. */
  byte[] encrypt(int version, byte[] plaintext, byte[] aad, byte[] nonce) {
    if (version != VERSION_0 && version != VERSION_1) {
      throw new IllegalArgumentException("unsupported encryption version " + version);
    }
    byte[] input = plaintext;
    if (version == VERSION_0) {
      int pad = BLOCK_SIZE - plaintext.length % BLOCK_SIZE;
      input = Arrays.copyOf(plaintext, plaintext.length + pad);
      Arrays.fill(input, plaintext.length, input.length, (byte) pad);
    }
    byte[] key;
    synchronized (lock) {
      key = keys.get(0);
    }
    try {
      Cipher c = GCM.get();
      SecretKeySpec spec = new SecretKeySpec(key, "AES");
      GCMParameterSpec params = new GCMParameterSpec(TAG_SIZE * 8, nonce);
      try {
        c.init(Cipher.ENCRYPT_MODE, spec, params);
      } catch (java.security.InvalidAlgorithmParameterException e) {
        // The cached cipher refuses the nonce of its previous encryption with the same key: only a caller-chosen
        // nonce (tests) repeats one. A fresh cipher does not remember it.
        c = newCipher();
        c.init(Cipher.ENCRYPT_MODE, spec, params);
      }
      if (aad != null && aad.length > 0) {
        c.updateAAD(aad);
      }
      byte[] out = new byte[1 + NONCE_SIZE + c.getOutputSize(input.length)];
      out[0] = (byte) version;
      System.arraycopy(nonce, 0, out, 1, NONCE_SIZE);
      c.doFinal(input, 0, input.length, out, 1 + NONCE_SIZE);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is unavailable in this JVM", e);
    }
  }

  /**
   * Decrypts {@code [vsn][nonce][ct+tag]} with the first key that authenticates it.
   *
   * @throws MalformedMessageException if it is too short, of an unknown version, or no key authenticates it
   */
  public byte[] decrypt(byte[] message, byte[] aad) throws MalformedMessageException {
    return decrypt(message, 0, message.length, aad);
  }

  /** As {@link #decrypt(byte[], byte[])} for {@code message[from..to)}. */
  public byte[] decrypt(byte[] message, int from, int to, byte[] aad) throws MalformedMessageException {
    checkHeader(message, from, to);
    byte[] plain = new byte[to - from - PLAINTEXT_OFFSET - TAG_SIZE];
    int n = open(message, from, to, aad, plain, 0);
    return n == plain.length ? plain : Arrays.copyOf(plain, n);
  }

  /**
   * Decrypts {@code message[from..to)} into itself: the plaintext replaces the ciphertext at {@code from +}
   * {@link #PLAINTEXT_OFFSET}, so a large stream frame costs no second buffer. AES-GCM checks the tag before it
   * writes any plaintext, so a key that fails leaves the ciphertext for the next one
   * ({@code KeyringTest.aSecondaryKeyDecryptsInPlaceAfterThePrimaryFailed}).
   *
   * @return the plaintext length
   * @throws MalformedMessageException as {@link #decrypt(byte[], byte[])}
   */
  public int decryptInPlace(byte[] message, int from, int to, byte[] aad) throws MalformedMessageException {
    checkHeader(message, from, to);
    return open(message, from, to, aad, message, from + PLAINTEXT_OFFSET);
  }

  private static void checkHeader(byte[] message, int from, int to) throws MalformedMessageException {
    int len = to - from;
    if (len < PLAINTEXT_OFFSET + TAG_SIZE) {
      throw new MalformedMessageException("encrypted payload too short: " + len + " bytes");
    }
    int version = message[from] & 0xff;
    if (version > VERSION_1) {
      throw new MalformedMessageException("unsupported encryption version " + version);
    }
  }

  /** Writes the plaintext of {@code message[from..to)} to {@code out[outOff..]}; returns its length unpadded. */
  private int open(byte[] message, int from, int to, byte[] aad, byte[] out, int outOff)
      throws MalformedMessageException {
    int version = message[from] & 0xff;
    List<byte[]> snapshot;
    synchronized (lock) {
      snapshot = keys;
    }
    GCMParameterSpec spec = new GCMParameterSpec(TAG_SIZE * 8, message, from + 1, NONCE_SIZE);
    for (byte[] key : snapshot) {
      int n;
      try {
        Cipher c = GCM.get();
        c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"), spec);
        if (aad != null && aad.length > 0) {
          c.updateAAD(aad);
        }
        n = c.doFinal(message, from + PLAINTEXT_OFFSET, to - from - PLAINTEXT_OFFSET, out, outOff);
      } catch (AEADBadTagException e) {
        continue;
      } catch (GeneralSecurityException e) {
        throw new MalformedMessageException("decryption failed: " + e.getMessage(), e);
      }
      return version == VERSION_0 ? unpaddedLength(out, outOff, n) : n;
    }
    throw new MalformedMessageException("no installed key decrypts the message (" + snapshot.size() + " keys tried)");
  }

  private static Cipher newCipher() {
    try {
      return Cipher.getInstance(TRANSFORMATION);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is unavailable in this JVM", e);
    }
  }

  private static int unpaddedLength(byte[] buf, int from, int n) throws MalformedMessageException {
    if (n == 0) {
      throw new MalformedMessageException("version 0 plaintext is empty (no PKCS7 padding)");
    }
    int pad = buf[from + n - 1] & 0xff;
    if (pad < 1 || pad > BLOCK_SIZE || pad > n) {
      throw new MalformedMessageException("version 0 plaintext has invalid PKCS7 padding " + pad);
    }
    return n - pad;
  }
}
