// Quiet returns of poll() and quiet chains, shared by the classic client (ClassicConsumer) and
// the KIP-848 one (AsyncConsumer): each gives its own quiet state and bounds, this gives the rest.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/client/consumer_client.hpp"
#include "models/protocol/model_options.hpp"
#include "sim/assert.hpp"
#include "sim/kernel.hpp"

namespace rsim {

/// The protocol's client `Client` derives from QuietReturns<Client> and supplies:
///   note_quiet_pass(): at the end of an entry, whether the client is in the quiet state
///     (quiet_pass_: valid, entries, until and the wait bounds);
///   poll_state(): what a return leaves that the checked quiet pass compares;
///   chain_timer(): the timer a quiet return re-arms besides the return's and the fetch
///     wake-up's, whose re-arm each return of a chain elides (nullptr: none), and
///     chain_rearm(): that re-arm's deadline (a Rearm);
///   chain_may_open(): whether a quiet return may open a chain (besides the shared conditions);
///   quiet_pass_state(): the rest of the state a quiet return leaves (no timers);
///   quiet_fixed_bound(now): the fetch wake-up's bound besides the records' and retry.backoff.ms
///     at a quiet return at `now` (from quiet_pass_.fixed_bound), and chain_fixed_bound(): the
///     one a chain's returns test (sim::kNever: it never ends a chain before `until`);
///   last_poll_: the last poll, written by quiet returns.
template <class Client>
class QuietReturns : public ConsumerClient {
 public:
  using ConsumerClient::ConsumerClient;

  /// Every quiet return of poll() (see quiet_poll_return()) also runs the full pass and checks
  /// that both leave the same state; a difference is an internal error (exit 3). ModelOptions::
  /// check_quiet_passes, set by the world.
  void check_quiet_passes(bool on) { check_quiet_passes_ = on; }
  /// Whether quiet returns of poll() may form quiet chains (see quiet_pass()); on by default.
  /// ModelOptions::quiet_chains, set by the world.
  void quiet_chains(bool on) { quiet_chains_ = on; }
  /// Where the client counts its quiet passes (the world's ModelCounters); null: not counted.
  void count_into(ModelCounters* counters) { counters_ = counters; }

 protected:
  // Quiet returns of poll(). In the steady state most returns of poll() at its timeout find
  // nothing to do: the member is STABLE, a Fetch is in flight to every broker, no record can be
  // there before the next append, and nothing is due (each client's own test). Such a return only
  // re-arms its timers; once a full return (or a frequent entry, settled()) left the client in
  // that state and nothing entered the client since (entries_), the next return does just that,
  // at the same instants, in the same order, with the same kernel sequence numbers as the full
  // pass.
  struct QuietPass {
    bool valid = false;
    std::uint64_t entries = 0;  // entries_ as the pass ended
    sim::SimTime until{0};      // the next heartbeat or auto-commit: a pass then acts
    /// The fetch wake-up's bound besides the records' (the KIP-848 client's wait_bound() without
    /// its retry.backoff.ms part; sim::kNever: none), and whether now + retry.backoff.ms bounds
    /// it too.
    sim::SimTime fixed_bound{0};
    bool backoff_bound = false;
  };
  /// When a quiet return re-arms chain_timer(): `base` after the return (`per_return`), or at
  /// `base`.
  struct Rearm {
    sim::SimTime base{0};
    bool per_return = false;
    sim::SimTime at(sim::SimTime t) const {
      return per_return ? sim::saturating_add(t, base) : base;
    }
  };
  bool quiet_poll_return() override;
  void settled() override { self().note_quiet_pass(); }
  /// What a quiet return does at `now`: full_poll_return(), begin_poll() and pass() in the quiet
  /// state, their timers armed alike (the next return, the client's chain_timer(), the fetch
  /// wake-up). With `may_chain`, a return that arms no fetch wake-up opens a quiet chain (below).
  void quiet_pass(bool may_chain);

  // Quiet chains. In the steady state a quiet return is followed by many more, one per
  // poll.timeout, until something enters the client or a bound is reached. A return that opens
  // a chain queues its next return as an entry of `chain_` instead of the poll-return timer's,
  // with the same (time, sequence number). When that entry fires and the return would be quiet
  // again (the bounds below, the process runnable, the same reach epoch and production), the
  // chain takes the return itself without touching the client: it takes the sequence numbers the
  // pass's timers would take (the next return's, then the chain timer's, whose re-arm the kernel
  // elides and counts as the pass would), queues its next entry and counts the pass. The first
  // entry into the client (entered()) or a return that would not be quiet closes the chain:
  // write_chain() writes the chain's passes into the client (last_poll_, entries_, the chain
  // timer's last arm) and hands the chain's queued return to the poll-return timer
  // (Timer::adopt_queued): when that entry fires, it fires the timer (at once, when the return
  // itself closed the chain). No entry is added or left out: events, their order, their sequence
  // numbers and Kernel::fired() are those of the returns one by one.
  struct QuietChain final : sim::EventTarget {
    explicit QuietChain(QuietReturns& c) : owner(c) {}
    void fire(std::uint64_t id) override { owner.on_chain_return(id); }
    std::string actor() const override { return owner.poll_return_timer_.actor(); }
    QuietReturns& owner;
    std::uint64_t id = 0;       // the open chain's; entries of closed chains are stale
    std::uint64_t returns = 0;  // quiet returns the chain took since it opened
    sim::SimTime next_at{0};    // the chain's queued return: (next_at, next_seq)
    std::uint64_t next_seq = 0;
    sim::SimTime last{0};          // the last return it took (when returns > 0)
    sim::Timer* timer = nullptr;   // chain_timer()
    std::uint64_t timer_seq = 0;   // that return's re-arm of it: its sequence number
    bool timer_counted = false;    // and whether the kernel counted its elision
    bool backoff = false;          // quiet_pass_.backoff_bound
    Rearm rearm;                   // chain_rearm()
    sim::SimTime timer_queued{0};  // its queued entry (sim::kNever: none)
    sim::SimTime until{0};         // a return at or after it may not be quiet
    sim::SimTime wake{0};          // the records' fetch wake-up (sim::kNever: none)
    sim::SimTime fixed{0};         // the client's bound besides (chain_fixed_bound())
    sim::SimTime turn{0};          // poll_call_length()
    sim::SimTime timer_turn{0};    // poll.timeout, at least a turn: poll()'s timer
    sim::SimTime backoff_turn{0};  // retry.backoff.ms, at least a turn
    std::uint64_t epoch = 0;       // the reach epoch and production layout it holds for
    std::uint64_t layout = 0;
  };
  void open_chain(sim::SimTime ret_at);
  void on_chain_return(std::uint64_t id);
  /// An entry into the client closes the open chain (see write_chain()).
  void close_chain() override;
  /// Writes the chain's returns into the client and hands its queued return to the timer: the
  /// generation the entry fires the timer with.
  std::uint64_t write_chain();

  /// Returns of closed chains still queued, handed to the timer: (chain id, timer generation).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> handed_;
  QuietPass quiet_pass_;
  QuietChain chain_{*this};
  bool quiet_chains_ = true;
  bool check_quiet_passes_ = false;
  ModelCounters* counters_ = nullptr;

 private:
  Client& self() { return static_cast<Client&>(*this); }
};

template <class Client>
bool QuietReturns<Client>::quiet_poll_return() {
  const bool quiet = quiet_pass_.valid && entries_ == quiet_pass_.entries + 1 &&
                     kernel_.now() < quiet_pass_.until && consumption_.finds_nothing();
  if (quiet && counters_ != nullptr) ++counters_->quiet_passes;
  if (quiet && !check_quiet_passes_) {
    self().quiet_pass(quiet_chains_);
    quiet_pass_.entries = entries_;
    return true;
  }
  quiet_pass_.valid = false;
  if (!quiet) {
    full_poll_return();
    self().note_quiet_pass();
    return true;
  }
  // Checking: the full pass, then what the quiet pass would have left, compared.
  const std::uint64_t seq_before = kernel_.next_seq();
  const QuietPass noted = quiet_pass_;
  full_poll_return();
  const std::uint64_t seqs = kernel_.next_seq() - seq_before;
  const auto full = self().poll_state();
  self().note_quiet_pass();
  SIM_ASSERT_MSG(quiet_pass_.valid && quiet_pass_.until == noted.until &&
                     quiet_pass_.fixed_bound == noted.fixed_bound &&
                     quiet_pass_.backoff_bound == noted.backoff_bound,
                 "quiet pass of " + spec_.name + ": the full pass left another quiet state");
  // The quiet pass from the same state: the full pass's arms are undone by arming again.
  const std::uint64_t seq_quiet = kernel_.next_seq();
  self().quiet_pass(false);
  const auto fast = self().poll_state();
  SIM_ASSERT_MSG(full == fast && kernel_.next_seq() - seq_quiet == seqs,
                 "quiet pass of " + spec_.name + " differs from the full pass");
  quiet_pass_.entries = entries_;
  return true;
}

template <class Client>
void QuietReturns<Client>::quiet_pass(bool may_chain) {
  // full_poll_return(), begin_poll() and pass() in this state, step by step.
  const sim::SimTime now = kernel_.now();
  in_poll_ = false;
  fetch_wake_timer_.cancel();
  in_poll_ = true;
  const sim::SimTime ret_at = sim::saturating_add(now, poll_call_length());
  // The fetch wake-up's bound: the records', the client's, and retry.backoff.ms when it applies.
  sim::SimTime bound = self().quiet_fixed_bound(now);
  if (quiet_pass_.backoff_bound)
    bound = std::min(bound,
                     sim::saturating_add(now, at_least_a_turn(sim::ms(config_.retry_backoff_ms))));
  // A wait that would end at or after poll()'s timer ends with it: poll() returns.
  if (bound >= sim::saturating_add(now, at_least_a_turn(spec_.poll_timeout))) bound = sim::kNever;
  const sim::SimTime next = std::min(consumption_.quiet_next(), bound);
  // The fetch wake-up is armed when it comes before the return (the return's timer is armed).
  const bool wake = next != sim::kNever && next < ret_at;
  const bool chain = may_chain && !wake && !poll_return_timer_.armed() &&
                     !poll_return_timer_.queued() && ret_at != sim::kNever &&
                     self().chain_may_open();
  if (chain) {
    // The next return is queued as the chain's entry, with the return timer's arm's sequence
    // number.
    chain_.next_at = ret_at;
    chain_.next_seq = kernel_.take_seq();
    kernel_.schedule_at_seq(ret_at, chain_.next_seq, &chain_, chain_.id);
  } else {
    poll_return_timer_.arm_at(ret_at);
  }
  self().last_poll_ = now;
  if (sim::Timer* t = self().chain_timer()) t->arm_at(self().chain_rearm().at(now));
  self().quiet_pass_state();
  if (wake)
    fetch_wake_timer_.arm_at(std::max(next, now));
  else
    fetch_wake_timer_.cancel();
  if (chain) open_chain(ret_at);
}

template <class Client>
void QuietReturns<Client>::open_chain(sim::SimTime ret_at) {
  QuietChain& c = chain_;
  c.returns = 0;
  c.next_at = ret_at;
  c.backoff = quiet_pass_.backoff_bound;
  c.until = std::min(quiet_pass_.until, consumption_.quiet_until());
  c.timer = self().chain_timer();
  c.rearm = self().chain_rearm();
  c.timer_queued = c.timer != nullptr ? c.timer->queued_at() : sim::kNever;
  c.wake = consumption_.quiet_next();
  c.fixed = self().chain_fixed_bound();
  c.turn = poll_call_length();
  c.timer_turn = at_least_a_turn(spec_.poll_timeout);
  c.backoff_turn = at_least_a_turn(sim::ms(config_.retry_backoff_ms));
  c.epoch = consumption_.quiet_epoch();
  c.layout = consumption_.workload().layout();
  chain_open_ = true;
}

template <class Client>
void QuietReturns<Client>::on_chain_return(std::uint64_t id) {
  QuietChain& c = chain_;
  if (id != c.id) {
    // The next return of a chain an entry closed: the poll-return timer's now (write_chain()).
    const auto it =
        std::find_if(handed_.begin(), handed_.end(), [id](const auto& h) { return h.first == id; });
    SIM_ASSERT(it != handed_.end());
    const std::uint64_t generation = it->second;
    handed_.erase(it);
    poll_return_timer_.fire(generation);
    return;
  }
  // Would the return be quiet, and its pass arm no fetch wake-up? quiet_poll_return()'s test:
  // nothing entered the client since (the chain is open), nothing is due (until), and the
  // records index is quiet (until, the reach epoch, production); the timer's: the application
  // thread may run. The chain timer's queued entry must come after the next return (it reads the
  // timer's last arm).
  const sim::SimTime now = kernel_.now();
  const sim::SimTime ret_at = sim::saturating_add(now, c.turn);
  sim::SimTime bound = c.fixed;
  if (c.backoff) bound = std::min(bound, sim::saturating_add(now, c.backoff_turn));
  if (bound >= sim::saturating_add(now, c.timer_turn)) bound = sim::kNever;  // poll() returns
  const sim::SimTime wake = std::min(c.wake, bound);
  std::optional<ChainEnd> end;
  if (now >= c.until)
    end = ChainEnd::Until;
  else if (ret_at >= c.timer_queued)
    end = ChainEnd::PollTimer;
  else if (wake != sim::kNever && wake < ret_at)
    end = ChainEnd::FetchWake;
  else if (!app_.runnable())
    end = ChainEnd::NotRunnable;
  else if (c.layout != consumption_.workload().layout())
    end = ChainEnd::Production;
  else if (reach_epoch() != c.epoch)
    end = ChainEnd::ReachEpoch;
  if (end) {
    // The client takes this return itself: this entry is the poll-return timer's now.
    if (counters_ != nullptr) ++counters_->chain_ends[static_cast<std::size_t>(*end)];
    poll_return_timer_.fire(write_chain());
    return;
  }
  ++c.returns;
  c.last = now;
  c.next_at = ret_at;
  c.next_seq = kernel_.take_seq();
  kernel_.schedule_at_seq(ret_at, c.next_seq, &c, c.id);
  if (c.timer != nullptr) {
    c.timer_seq = kernel_.take_seq();
    const sim::Kernel::Elision e = kernel_.elide(c.rearm.at(now));
    SIM_ASSERT(e != sim::Kernel::Elision::No);
    c.timer_counted = e == sim::Kernel::Elision::Counted;
  }
  if (counters_ != nullptr) {
    ++counters_->quiet_passes;
    ++counters_->chain_returns;
  }
}

template <class Client>
void QuietReturns<Client>::close_chain() {
  if (counters_ != nullptr) ++counters_->chain_ends[static_cast<std::size_t>(ChainEnd::Entry)];
  const std::uint64_t id = chain_.id;
  handed_.emplace_back(id, write_chain());
}

template <class Client>
std::uint64_t QuietReturns<Client>::write_chain() {
  QuietChain& c = chain_;
  chain_open_ = false;
  ++c.id;
  const std::uint64_t generation = poll_return_timer_.adopt_queued(c.next_at, c.next_seq);
  if (c.returns == 0) return generation;
  if (c.timer != nullptr) c.timer->restore_elided(c.rearm.at(c.last), c.timer_seq, c.timer_counted);
  self().last_poll_ = c.last;
  entries_ += c.returns;
  quiet_pass_.entries += c.returns;
  c.returns = 0;
  return generation;
}

}  // namespace rsim
