package dev.fencing.agent.disk;

import dev.fencing.agent.disk.DiskState.Phase;
import dev.fencing.agent.disk.DiskState.Tie;
import dev.fencing.agent.disk.SbdDevice.SlotRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedSet;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared-disk protocol on one node, on this node's monotonic clock and without I/O: the disk thread reads every
 * slot, hands the result to {@link #onRead}, performs the writes it returns and reports them with {@link #onWritten}.
 *
 * <ul>
 *   <li><b>Slot allocation</b> as sbd does it: look the name up (first slot whose name matches, ignoring case); if
 *       absent, write it into the first unused slot, wait the header's allocate timeout and look it up again (two
 *       allocators racing for one slot: the later write wins, the other moves on).
 *   <li><b>Own slot</b>: every cycle, the {@link SlotView} with a new generation. sbd reads only the in-use byte and
 *       the name, so {@code sbd list/dump/message} keep working.
 *   <li><b>Poison pill</b>: reset, off or crashdump in this node's mailbox. Kept until the mailbox reads clear.
 *       Mailboxes are never written here, so a pill can never be overwritten by this agent.
 *   <li><b>Cut-off</b>: at least a quorum of other expected members write fresh slots (generation changed within
 *       {@link DiskTiming#freshNanos()} on this node's clock), each holding quorum, none hearing this node and none
 *       heard by it.
 *   <li><b>Tie</b>: see {@link #onRead}'s claim rules and docs/architecture.md ("Shared-disk arbiter").
 * </ul>
 */
public final class DiskArbiter {

  private static final Logger LOG = LoggerFactory.getLogger(DiskArbiter.class);

  private final String self;
  // Replaced by retime (quorum thread) while the disk thread reads it.
  private volatile DiskTiming timing;
  private final String logContext;

  private DiskState state;
  private long generation;
  private int highestInUse = -1;
  private boolean fullScanDone;
  private final Map<Integer, SlotWatch> watches = new HashMap<>();
  private long previousReadStartNanos = Long.MIN_VALUE;
  // allocation
  private int allocatingSlot = -1;
  private long allocationLandedNanos;
  // tie
  private Phase phase = Phase.IDLE;
  private SortedSet<String> claimSide = new TreeSet<>();
  private boolean claimLanded;
  private long claimLandedEndNanos;
  private long lastClaimWriteStartNanos;
  private String tieReason = "no tie";
  private Optional<String> lastLoggedMailbox = Optional.empty();

  /**
   * @param self this node's member name (must fit an SBD slot: 1..63 printable ASCII)
   * @param timing the periods
   * @param logContext {@code node=… group=…}
   */
  public DiskArbiter(String self, DiskTiming timing, String logContext) {
    SbdNames.encodable(self);
    this.self = self;
    this.timing = timing;
    this.logContext = logContext;
    this.state = DiskState.initial();
  }

  /**
   * New periods for what follows (the group's timings changed): the slot, the watches and a tie in progress stay;
   * a lease already written keeps the end it was written with.
   */
  public void retime(DiskTiming newTiming) {
    this.timing = java.util.Objects.requireNonNull(newTiming, "timing");
  }

  /** The latest state. */
  public DiskState state() {
    return state;
  }

  /** How many slots the next read should cover: all at first, then every allocated slot and the next free one. */
  public int slotsToRead(SbdHeader header) {
    return fullScanDone ? Math.min(header.slots(), highestInUse + 2) : header.slots();
  }

  /** A write the disk thread must perform: this node's slot sector at {@code slot}. */
  public record Write(int slot, SbdSlot content) {}

  /**
   * A tie request from the quorum loop (its prepare/evaluate calls), renewed every evaluation tick while it lasts.
   *
   * @param side the side this node is on, this node included
   * @param askedAtNanos when it was last asked
   */
  public record TieRequest(SortedSet<String> side, long askedAtNanos) {
    public TieRequest {
      side = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(side));
    }
  }

  /**
   * One successful read of the header and slots {@code 0..n-1}.
   *
   * @param readStartNanos when the read was issued (a write that completed before it is in the result)
   * @param readEndNanos when it completed (a write seen in the result completed before it)
   * @param local the quorum loop's latest view
   * @param request the latest tie request, if any
   * @return the write to perform now (this node's slot), if any
   */
  public Optional<Write> onRead(long readStartNanos, long readEndNanos, SbdHeader header, List<SlotRecord> slots,
      LocalView local, Optional<TieRequest> request) {
    fullScanDone |= slots.size() >= header.slots();
    Map<String, Integer> slotOf = new HashMap<>();
    Map<Integer, String> ownerOf = new HashMap<>();
    int firstUnused = -1;
    for (SlotRecord r : slots) {
      if (r.slot().inUse()) {
        highestInUse = Math.max(highestInUse, r.index());
        slotOf.putIfAbsent(r.slot().name().toLowerCase(java.util.Locale.ROOT), r.index());
        ownerOf.put(r.index(), r.slot().name());
      } else if (firstUnused < 0) {
        firstUnused = r.index();
      }
      watch(r, readStartNanos, readEndNanos);
    }
    previousReadStartNanos = readStartNanos;

    Integer mine = slotOf.get(self.toLowerCase(java.util.Locale.ROOT));
    if (allocatingSlot >= 0 && readStartNanos - allocationLandedNanos < header.allocateTimeout() * 1_000_000_000L) {
      mine = null; // sbd's rule: trust the lookup only after the allocate timeout
    } else if (allocatingSlot >= 0) {
      if (mine != null) {
        LOG.info("{} event=disk_slot_allocated slot={}", logContext, mine);
      }
      allocatingSlot = -1;
    }
    Optional<String> pill = state.poisonPill();
    Optional<String> cutOff = Optional.empty();
    if (mine != null) {
      // continue the generation found on disk, so a restarted agent's first write is seen as a change
      generation = Math.max(generation, slots.get(mine).slot().view().map(SlotView::generation).orElse(0L));
      SbdMailbox mailbox = slots.get(mine).mailbox();
      pill = pill(mailbox, pill);
      cutOff = cutOff(mine, local, slotOf, slots, readEndNanos);
    }
    Tie tie = tie(readStartNanos, local, request, slotOf, ownerOf, slots, mine != null);
    state = new DiskState(DiskState.OptionalLongNanos.of(readStartNanos), Optional.empty(),
        mine == null ? OptionalInt.empty() : OptionalInt.of(mine), pill, cutOff, tie);

    if (mine != null) {
      return Optional.of(new Write(mine, SbdSlot.owned(self, Optional.of(view(local, slotOf)))));
    }
    if (allocatingSlot >= 0) {
      return Optional.empty();
    }
    if (firstUnused < 0) {
      if (slots.size() >= header.slots()) {
        fail(readEndNanos, "no free slot among " + header.slots() + " for " + self);
      }
      return Optional.empty();
    }
    allocatingSlot = firstUnused;
    LOG.info("{} event=disk_slot_allocating slot={} detail=\"slot is unused, trying to own it\"", logContext,
        firstUnused);
    return Optional.of(new Write(firstUnused, SbdSlot.owned(self, Optional.empty())));
  }

  /** The write returned by the latest {@link #onRead} completed between these instants. */
  public void onWritten(Write write, long writeStartNanos, long writeEndNanos) {
    if (write.slot() == allocatingSlot && write.content().view().isEmpty()) {
      allocationLandedNanos = writeEndNanos;
      return;
    }
    SlotView view = write.content().view().orElseThrow();
    if (view.claim() != SlotView.ClaimState.NONE && (phase == Phase.CLAIMING || phase == Phase.HELD)) {
      if (phase == Phase.HELD && writeStartNanos - (lastClaimWriteStartNanos + timing.leaseNanos()) > 0) {
        // The lease ran out before this write started (this process stalled): the other side may have won the
        // disk meanwhile, so the write renews nothing; the next read claims again under the claim rules.
        lapse(writeStartNanos);
        return;
      }
      if (!claimLanded) {
        claimLanded = true;
        claimLandedEndNanos = writeEndNanos;
      }
      lastClaimWriteStartNanos = writeStartNanos;
      if (phase == Phase.HELD) {
        state = withTie(new Tie(Phase.HELD, claimSide, writeStartNanos + timing.leaseNanos(), tieReason));
      }
    }
  }

  /** A read or write failed (or timed out). */
  public void fail(long nowNanos, String reason) {
    if (!state.problem().equals(Optional.of(reason))) {
      LOG.warn("{} event=disk_unreadable detail=\"{}\"", logContext, reason);
    }
    state = new DiskState(state.lastGoodReadNanos(), Optional.of(reason), state.slot(), state.poisonPill(),
        Optional.empty(), state.tie());
  }

  private Optional<String> pill(SbdMailbox mailbox, Optional<String> current) {
    Optional<SbdCommand> command = mailbox.command();
    String described = mailbox.describe();
    if (command.isPresent() && command.get().isPoisonPill()) {
      if (current.isEmpty()) {
        LOG.warn("{} event=poison_pill message=\"{}\"", logContext, described);
      }
      return Optional.of(described);
    }
    if (command.equals(Optional.of(SbdCommand.CLEAR))) {
      if (current.isPresent()) {
        LOG.info("{} event=poison_pill_cleared message=\"{}\"", logContext, described);
      }
      lastLoggedMailbox = Optional.empty();
      return Optional.empty();
    }
    // test, exit and unknown codes are logged once and never acted on (this agent is never stopped remotely)
    if (!lastLoggedMailbox.equals(Optional.of(described))) {
      lastLoggedMailbox = Optional.of(described);
      LOG.info("{} event=disk_message_ignored message=\"{}\"", logContext, described);
    }
    return current;
  }

  private Optional<String> cutOff(int mine, LocalView local, Map<String, Integer> slotOf, List<SlotRecord> slots,
      long readEndNanos) {
    List<String> without = new ArrayList<>();
    Map<String, SlotView> views = new HashMap<>();
    Map<String, Integer> slotsOf = new HashMap<>();
    for (String member : local.expected()) {
      Integer slot = slotOf.get(member.toLowerCase(java.util.Locale.ROOT));
      // a member this node still hears is no evidence: after a stall of this node its peers' bitmaps lag behind,
      // while the heartbeats that queued up meanwhile show the network is there
      if (member.equals(self) || slot == null || slot >= slots.size() || local.heard().contains(member)) {
        continue;
      }
      Optional<SlotView> view = slots.get(slot).slot().view();
      if (fresh(slot, readEndNanos) && view.isPresent() && view.get().quorumHeld()
          && !view.get().heard().contains(mine)) {
        without.add(member);
        views.put(member, view.get());
        slotsOf.put(member, slot);
      }
    }
    // The holders must hear each other: a quorum of them, each hearing at least quorum − 1 of the others. After a
    // blip of the whole network (shorter than the quorum window, longer than the heard window) every slot says
    // "quorum held, hears nobody", and without this every node would take itself for the one cut off and fence. It
    // also keeps a group relayed over the overlay (above 16 members, where a node hears only its neighbours) from
    // reading its non-neighbours as holders that do not hear it.
    int connected = 0;
    for (String holder : without) {
      SortedSet<Integer> heard = views.get(holder).heard();
      long others = without.stream().filter(o -> !o.equals(holder) && heard.contains(slotsOf.get(o))).count();
      if (others >= local.quorumSize() - 1) {
        connected++;
      }
    }
    if (connected >= local.quorumSize() && !local.expected().isEmpty()) {
      if (state.cutOff().isEmpty()) {
        LOG.warn("{} event=disk_cut_off holders={} quorum={}", logContext, without, local.quorumSize());
      }
      return Optional.of(without + " hold quorum without hearing this node");
    }
    return Optional.empty();
  }

  private boolean fresh(int slot, long nowNanos) {
    SlotWatch w = watches.get(slot);
    return w != null && w.changeObserved && nowNanos - w.changedAtNanos <= timing.freshNanos();
  }

  /** No change for the stale period since the latest change, or since the slot was first read. */
  private boolean stale(int slot, long nowNanos) {
    SlotWatch w = watches.get(slot);
    return w == null || nowNanos - w.changedAtNanos > timing.staleNanos();
  }

  /**
   * The claim rules. Sides conflict when they are disjoint (two exact halves); the side holding the lowest expected
   * name has priority. A claim counts once the write carrying it has landed ({@code L}, its completion) and a later
   * read (started after {@code L}) has been made:
   * <ul>
   *   <li>any fresh conflicting HELD ⇒ LOST;
   *   <li>priority side: WIN unless a conflicting CLAIMING is old, i.e. {@code L ≥ absent + young}, where
   *       {@code absent} is the start of the latest read that did not yet show it (then wait for it to resolve);
   *   <li>other side: any conflicting claim ⇒ LOST; WIN once a read starts {@code claimWait} after {@code L}.
   * </ul>
   * Both winning would need the other side's read to miss the priority claim (so the priority claim landed after
   * {@code L_other + claimWait}) and the priority side to see the other claim as young ({@code L_prio < absent +
   * young ≤ L_other + young}): impossible since {@code claimWait > young}. Stale claims (no generation change for
   * {@link DiskTiming#staleNanos()}) are ignored: their lease has ended.
   */
  private Tie tie(long readStartNanos, LocalView local, Optional<TieRequest> request, Map<String, Integer> slotOf,
      Map<Integer, String> ownerOf, List<SlotRecord> slots, boolean haveSlot) {
    Optional<SortedSet<String>> wanted = request
        .filter(r -> readStartNanos - r.askedAtNanos() <= timing.requestTtlNanos())
        .map(TieRequest::side);
    if (wanted.isEmpty() || !haveSlot) {
      if (phase != Phase.IDLE) {
        LOG.info("{} event=disk_tie_released side={}", logContext, claimSide);
      }
      phase = Phase.IDLE;
      claimSide = new TreeSet<>();
      claimLanded = false;
      tieReason = haveSlot ? "no tie" : "no slot yet";
      return Tie.IDLE;
    }
    if (!wanted.get().equals(claimSide)) {
      phase = Phase.CLAIMING;
      claimSide = new TreeSet<>(wanted.get());
      claimLanded = false;
      tieReason = "Disk: claiming for side " + claimSide;
      LOG.info("{} event=disk_tie_claiming side={}", logContext, claimSide);
    }
    List<String> held = new ArrayList<>();
    List<Integer> claiming = new ArrayList<>();
    for (SlotRecord r : slots) {
      String owner = ownerOf.get(r.index());
      if (owner == null || owner.equalsIgnoreCase(self) || !local.expected().contains(owner)
          || r.slot().view().isEmpty() || stale(r.index(), readStartNanos)) {
        continue;
      }
      SlotView v = r.slot().view().get();
      if (v.claim() == SlotView.ClaimState.NONE) {
        continue;
      }
      SortedSet<String> theirs = names(v.claimSide(), ownerOf);
      if (theirs.isEmpty() || intersects(theirs, claimSide)) {
        continue;
      }
      if (v.claim() == SlotView.ClaimState.HELD) {
        held.add(owner);
      } else {
        claiming.add(r.index());
      }
    }
    boolean priority = !local.expected().isEmpty() && claimSide.contains(local.expected().first());
    if (phase == Phase.HELD && readStartNanos - (lastClaimWriteStartNanos + timing.leaseNanos()) > 0) {
      // Held, but the lease ran out before this read started (this process stalled longer than the lease): the
      // other side may have found our slot stale and won. Never revive it: claim again under the claim rules.
      lapse(readStartNanos);
    }
    if (phase == Phase.LOST && held.isEmpty() && claiming.isEmpty()) {
      phase = Phase.CLAIMING;
      claimLanded = false;
      tieReason = "Disk: claiming again for side " + claimSide;
    }
    if (phase == Phase.CLAIMING && claimLanded && readStartNanos - claimLandedEndNanos > 0) {
      if (!held.isEmpty()) {
        lose("Disk: " + held + " hold the disk lease for the other side");
      } else if (priority) {
        List<String> old = new ArrayList<>();
        for (int slot : claiming) {
          long absent = watches.get(slot).claimAbsentAtNanos;
          if (absent == Long.MIN_VALUE || claimLandedEndNanos - absent >= timing.youngNanos()) {
            old.add(ownerOf.get(slot));
          }
        }
        if (old.isEmpty()) {
          win("Disk: side holding " + local.expected().first() + " won the disk lease");
        } else {
          tieReason = "Disk: waiting for the earlier claim of " + old + " to resolve";
        }
      } else if (!claiming.isEmpty()) {
        List<String> who = claiming.stream().map(ownerOf::get).toList();
        lose("Disk: " + who + " claim for the side holding " + local.expected().first());
      } else if (readStartNanos - claimLandedEndNanos >= timing.claimWaitNanos()) {
        win("Disk: no claim from the other side within " + timing.claimWaitNanos() / 1_000_000 + "ms");
      }
    } else if (phase == Phase.HELD && !held.isEmpty()) {
      LOG.error("{} event=disk_tie_conflict side={} other_holders={}", logContext, claimSide, held);
    }
    long validUntil = phase == Phase.HELD ? lastClaimWriteStartNanos + timing.leaseNanos() : 0;
    return new Tie(phase, claimSide, validUntil, tieReason);
  }

  private void lapse(long nowNanos) {
    LOG.warn("{} event=disk_tie_lease_lapsed side={} lapsed_ms_ago={}", logContext, claimSide,
        (nowNanos - (lastClaimWriteStartNanos + timing.leaseNanos())) / 1_000_000);
    phase = Phase.CLAIMING;
    claimLanded = false;
    tieReason = "Disk: the lease ran out (this node stalled); claiming again for side " + claimSide;
    state = withTie(new Tie(Phase.CLAIMING, claimSide, 0, tieReason));
  }

  private void win(String reason) {
    phase = Phase.HELD;
    tieReason = reason;
    LOG.warn("{} event=disk_tie_won side={} reason=\"{}\"", logContext, claimSide, reason);
  }

  private void lose(String reason) {
    phase = Phase.LOST;
    tieReason = reason;
    LOG.warn("{} event=disk_tie_lost side={} reason=\"{}\"", logContext, claimSide, reason);
  }

  private DiskState withTie(Tie tie) {
    return new DiskState(state.lastGoodReadNanos(), state.problem(), state.slot(), state.poisonPill(),
        state.cutOff(), tie);
  }

  private SlotView view(LocalView local, Map<String, Integer> slotOf) {
    generation++;
    SlotView.ClaimState claim = switch (phase) {
      case CLAIMING -> SlotView.ClaimState.CLAIMING;
      case HELD -> SlotView.ClaimState.HELD;
      default -> SlotView.ClaimState.NONE;
    };
    SortedSet<Integer> side = claim == SlotView.ClaimState.NONE ? new TreeSet<>() : slots(claimSide, slotOf);
    if (side.isEmpty()) {
      claim = SlotView.ClaimState.NONE;
    }
    return new SlotView(generation, local.quorumHeld(), local.revision(), Math.min(local.expected().size(), 0xFFFF),
        slots(local.confirmed(), slotOf), slots(local.heard(), slotOf), claim, side);
  }

  private static SortedSet<Integer> slots(SortedSet<String> names, Map<String, Integer> slotOf) {
    SortedSet<Integer> out = new TreeSet<>();
    for (String n : names) {
      Integer s = slotOf.get(n.toLowerCase(java.util.Locale.ROOT));
      if (s != null) {
        out.add(s);
      }
    }
    return out;
  }

  private static SortedSet<String> names(SortedSet<Integer> slots, Map<Integer, String> ownerOf) {
    SortedSet<String> out = new TreeSet<>();
    for (int s : slots) {
      String owner = ownerOf.get(s);
      if (owner != null) {
        out.add(owner);
      }
    }
    return out;
  }

  private static boolean intersects(SortedSet<String> a, SortedSet<String> b) {
    for (String x : a) {
      for (String y : b) {
        if (x.equalsIgnoreCase(y)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Tracks when a slot's generation last changed and when its current claim first appeared. */
  private void watch(SlotRecord r, long readStartNanos, long readEndNanos) {
    SlotWatch w = watches.computeIfAbsent(r.index(), i -> new SlotWatch());
    Optional<SlotView> view = r.slot().view();
    long gen = view.map(SlotView::generation).orElse(Long.MIN_VALUE);
    if (!w.seen) {
      w.changedAtNanos = readEndNanos;
    } else if (gen != w.generation) {
      w.changedAtNanos = readEndNanos;
      w.changeObserved = true;
    }
    SortedSet<Integer> claim = view.filter(v -> v.claim() != SlotView.ClaimState.NONE).map(SlotView::claimSide)
        .orElse(new TreeSet<>());
    if (!claim.equals(w.claim)) {
      // the claim was not in the previous read, which started then: it landed after that instant
      w.claimAbsentAtNanos = claim.isEmpty() ? readStartNanos : previousReadStartNanos;
      w.claim = claim;
    }
    w.seen = true;
    w.generation = gen;
  }

  private static final class SlotWatch {
    boolean seen;
    boolean changeObserved;
    long generation;
    long changedAtNanos;
    SortedSet<Integer> claim = new TreeSet<>();
    long claimAbsentAtNanos = Long.MIN_VALUE;
  }
}
