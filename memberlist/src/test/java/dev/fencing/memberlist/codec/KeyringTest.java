package dev.fencing.memberlist.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class KeyringTest {
  private static byte[] key(int size, int fill) {
    byte[] k = new byte[size];
    java.util.Arrays.fill(k, (byte) fill);
    return k;
  }

  @Test
  void rotationInstallUseRemove() throws Exception {
    byte[] a = key(16, 1);
    byte[] b = key(32, 2);
    Keyring ring = new Keyring(a);
    byte[] sealedWithA = ring.encrypt(1, "hello".getBytes(StandardCharsets.UTF_8), new byte[0]);
    ring.install(b);
    assertThat(ring.keys()).hasSize(2);
    ring.use(b);
    assertThat(ring.primaryKey()).isEqualTo(b);
    assertThat(ring.decrypt(sealedWithA, new byte[0])).asString().isEqualTo("hello");
    assertThatThrownBy(() -> ring.remove(b)).hasMessageContaining("primary");
    ring.remove(a);
    assertThat(ring.keys()).containsExactly(b);
    assertThatThrownBy(() -> ring.decrypt(sealedWithA, new byte[0])).hasMessageContaining("no installed key");
    assertThatThrownBy(() -> ring.use(a)).hasMessageContaining("install it first");
    assertThatThrownBy(() -> new Keyring(key(20, 0))).hasMessageContaining("16, 24 or 32");
  }

  @Test
  void versionZeroPadsAndVersionOneDoesNot() throws Exception {
    Keyring ring = new Keyring(key(24, 3));
    for (int len : new int[] {0, 15, 16, 17}) {
      byte[] plain = new byte[len];
      byte[] v0 = ring.encrypt(0, plain, null);
      byte[] v1 = ring.encrypt(1, plain, null);
      // memberlist's measured lengths: 45/45/61/61 for vsn 0, len+29 for vsn 1
      assertThat(v0.length).isEqualTo(len + 29 + (16 - len % 16));
      assertThat(v1.length).isEqualTo(len + 29);
      assertThat(ring.decrypt(v0, null)).isEqualTo(plain);
      assertThat(ring.decrypt(v1, null)).isEqualTo(plain);
    }
  }

  @Test
  void additionalDataIsAuthenticated() {
    Keyring ring = new Keyring(key(16, 4));
    byte[] sealed = ring.encrypt(1, new byte[] {1, 2, 3}, "label".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> ring.decrypt(sealed, null)).isInstanceOf(MalformedMessageException.class);
    sealed[0] = 2;
    assertThatThrownBy(() -> ring.decrypt(sealed, null)).hasMessageContaining("version 2");
    assertThatThrownBy(() -> ring.decrypt(new byte[10], null)).hasMessageContaining("too short");
  }

  @Test
  void theCipherEachThreadKeepsServesEveryKeyAndMessageInAnyOrder() throws Exception {
    Keyring one = new Keyring(key(16, 5));
    Keyring two = new Keyring(key(32, 6), key(16, 5));
    byte[] nonce = new byte[Keyring.NONCE_SIZE];
    byte[] first = one.encrypt(1, new byte[] {1}, null, nonce);
    // The same key and nonce again (only tests choose nonces): the thread's cipher refuses it, a fresh one seals.
    assertThat(one.encrypt(1, new byte[] {1}, null, nonce)).isEqualTo(first);
    byte[] withSix = two.encrypt(1, new byte[] {2}, null);
    assertThat(two.decrypt(first, null)).as("second key after a failed first").containsExactly(1);
    assertThat(one.decrypt(first, null)).containsExactly(1);
    assertThatThrownBy(() -> one.decrypt(withSix, null)).isInstanceOf(MalformedMessageException.class);
    assertThat(two.decrypt(withSix, null)).as("after a failed tag on this thread").containsExactly(2);

    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      java.util.List<java.util.concurrent.Future<Boolean>> results = new java.util.ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int seed = t;
        results.add(pool.submit(() -> {
          for (int i = 0; i < 200; i++) {
            byte[] plain = {(byte) seed, (byte) i};
            Keyring ring = (i + seed) % 2 == 0 ? one : two;
            if (!java.util.Arrays.equals(ring.decrypt(ring.encrypt(1, plain, null), null), plain)) {
              return false;
            }
          }
          return true;
        }));
      }
      for (var r : results) {
        assertThat(r.get(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A stream frame is decrypted into its own buffer. AES-GCM checks the tag before it writes plaintext, so a key that
   * fails leaves the ciphertext intact for the next one (rotation: the frame was sealed with a secondary key), and a
   * version 0 frame's padding is cut from the length, not copied off.
   */
  @Test
  void aSecondaryKeyDecryptsInPlaceAfterThePrimaryFailed() throws Exception {
    byte[] plain = new byte[100_000];
    new java.util.SplittableRandom(11).nextBytes(plain);
    byte[] aad = {10, 0, 1, 2, 3};
    Keyring sender = new Keyring(key(16, 7));
    Keyring receiver = new Keyring(key(32, 8), key(16, 7));
    for (int version : new int[] {0, 1}) {
      byte[] sealed = sender.encrypt(version, plain, aad);
      byte[] frame = new byte[sealed.length + 3];
      System.arraycopy(sealed, 0, frame, 2, sealed.length);

      int n = receiver.decryptInPlace(frame, 2, 2 + sealed.length, aad);

      assertThat(n).isEqualTo(plain.length);
      int at = 2 + Keyring.PLAINTEXT_OFFSET;
      assertThat(java.util.Arrays.copyOfRange(frame, at, at + n)).isEqualTo(plain);
    }
  }
}
