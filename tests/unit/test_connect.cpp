// `linerate connect`: its segments (the SYN template, the parser of answers, the replies), its
// window of handshakes, and its engine against a simulated TCP listener that checks every
// segment it gets the way a stack would (sequence and acknowledgement numbers, checksums) and
// keeps a stack's counters (passive opens, attempt failures, resets).
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <vector>

#include "packet/addr.h"
#include "packet/checksum.h"
#include "packet/tcp_segment.h"
#include "worker/connect_engine.h"
#include "worker/handshake_window.h"

namespace {

using namespace lr;
using packet::TcpSegment;
using packet::SegmentParse;

packet::FrameSpec endpoints(bool v6, bool vlan) {
    packet::FrameSpec f;
    f.src_ip = packet::parse_ip(v6 ? "2001:2::1" : "198.18.0.1", "src");
    f.dst_ip = packet::parse_ip(v6 ? "2001:2::2" : "198.18.0.2", "dst");
    f.dst_port = 8080;
    f.ttl = 64;
    if (vlan) f.vlan = 42;
    return f;
}

std::vector<uint8_t> syn_frame(const packet::SynTemplate& t, uint16_t port, uint32_t isn) {
    auto f = t.frame;
    packet::stamp_syn(f.data(), t, port, isn);
    return f;
}

TEST(TcpSegment, TheSynParsesBackWithItsPortSequenceAndChecksums) {
    for (bool v6 : {false, true})
        for (bool vlan : {false, true}) {
            const auto t = packet::build_syn(endpoints(v6, vlan), 1460);
            EXPECT_GE(t.frame.size(), 60u);
            for (uint32_t isn : {0u, 1u, 0xfffffffeu, 0x12345678u}) {
                const auto f = syn_frame(t, 40000, isn);
                TcpSegment s;
                ASSERT_EQ(packet::parse_tcp_segment(f.data(), static_cast<uint32_t>(f.size()), s), SegmentParse::tcp)
                    << "v6 " << v6 << " vlan " << vlan << " isn " << isn;
                EXPECT_EQ(s.sport, 40000);
                EXPECT_EQ(s.dport, 8080);
                EXPECT_EQ(s.seq, isn);
                EXPECT_EQ(s.flags, packet::kTcpSyn);
                EXPECT_EQ(s.data, 0u);
                EXPECT_EQ(s.ipv6, v6);
                EXPECT_EQ(s.vlan, vlan);
            }
        }
}

TEST(TcpSegment, AnyFlippedBitIsMalformedAndNoTruncationIsReadPast) {
    const auto t = packet::build_syn(endpoints(false, false), 1460);
    const auto good = syn_frame(t, 1234, 777);
    TcpSegment s;
    // Every bit of the IP and TCP headers: a checksum or a length catches it (or it is no longer
    // TCP over IP at all).
    for (size_t byte = 14; byte < 14 + 20 + 24; ++byte)
        for (int bit = 0; bit < 8; ++bit) {
            auto f = good;
            f[byte] ^= static_cast<uint8_t>(1u << bit);
            EXPECT_NE(packet::parse_tcp_segment(f.data(), static_cast<uint32_t>(f.size()), s), SegmentParse::tcp)
                << "byte " << byte << " bit " << bit;
        }
    // Truncated anywhere: never TCP, never a read past the end (the sanitizers watch).
    for (uint32_t len = 0; len < 14 + 20 + 24; ++len) {
        std::vector<uint8_t> f(good.begin(), good.begin() + len);
        EXPECT_NE(packet::parse_tcp_segment(f.data(), len, s), SegmentParse::tcp) << len;
    }
}

TEST(TcpSegment, AReplySwapsTheEndpointsAndCarriesItsNumbers) {
    for (bool v6 : {false, true})
        for (bool vlan : {false, true}) {
            auto spec = endpoints(v6, vlan);
            spec.src_mac = packet::parse_mac("02:00:00:00:00:0a", "src");
            spec.dst_mac = packet::parse_mac("02:00:00:00:00:0b", "dst");
            const auto t = packet::build_syn(spec, 1460);
            const auto syn = syn_frame(t, 5555, 1000);
            TcpSegment in;
            ASSERT_EQ(packet::parse_tcp_segment(syn.data(), static_cast<uint32_t>(syn.size()), in), SegmentParse::tcp);
            uint8_t out[packet::kMaxReplyLen];
            const uint32_t n = packet::write_reply(out, syn.data(), in, 9000, 1001, packet::kTcpSyn | packet::kTcpAck, 64);
            EXPECT_EQ(n, std::max<uint32_t>(60, 14 + (vlan ? 4 : 0) + (v6 ? 40 : 20) + 20));
            TcpSegment r;
            ASSERT_EQ(packet::parse_tcp_segment(out, n, r), SegmentParse::tcp);
            EXPECT_EQ(r.sport, 8080);
            EXPECT_EQ(r.dport, 5555);
            EXPECT_EQ(r.seq, 9000u);
            EXPECT_EQ(r.ack, 1001u);
            EXPECT_EQ(r.flags, packet::kTcpSyn | packet::kTcpAck);
            EXPECT_EQ(0, std::memcmp(out, syn.data() + 6, 6));  // to the SYN's sender
            EXPECT_EQ(0, std::memcmp(out + 6, syn.data(), 6));
            const uint32_t ip = 14 + (vlan ? 4 : 0);
            const uint32_t alen = v6 ? 16 : 4, src = v6 ? 8 : 12, dst = v6 ? 24 : 16;
            EXPECT_EQ(0, std::memcmp(out + ip + src, syn.data() + ip + dst, alen));
            EXPECT_EQ(0, std::memcmp(out + ip + dst, syn.data() + ip + src, alen));
            if (vlan) {
                EXPECT_EQ(0, std::memcmp(out + 12, syn.data() + 12, 4));
            }
            // A RST carries no acknowledgement number.
            const uint32_t m = packet::write_reply(out, syn.data(), in, 1001, 777, packet::kTcpRst, 64);
            ASSERT_EQ(packet::parse_tcp_segment(out, m, r), SegmentParse::tcp);
            EXPECT_EQ(r.ack, 0u);
            EXPECT_EQ(r.flags, packet::kTcpRst);
        }
}

TEST(HandshakeWindow, FindsTheConnectionAnAnswerNamesAndWritesOffTheLateOnes) {
    worker::HandshakeWindow w(4);
    EXPECT_EQ(w.room(), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(w.open(100 + i), uint64_t(i));
    EXPECT_EQ(w.room(), 0u);
    EXPECT_EQ(w.syn_sent(), 4u);
    uint64_t c = 99;
    ASSERT_EQ(w.find(2, c), worker::HandshakeWindow::Found::in_window);
    EXPECT_EQ(c, 2u);
    EXPECT_EQ(w.find(7, c), worker::HandshakeWindow::Found::gone);  // never sent
    w.set(0, worker::HandshakeWindow::State::done);
    w.set(1, worker::HandshakeWindow::State::established);
    EXPECT_EQ(w.syn_sent(), 2u);
    EXPECT_EQ(w.established(), 1u);
    uint64_t timeouts = 0, unclosed = 0;
    w.expire(150, 1000, 1000, timeouts, unclosed);  // nothing old enough
    EXPECT_EQ(w.room(), 1u);  // connection 0 ended: its slot is free
    w.expire(2000, 1000, 5000, timeouts, unclosed);  // 1 established, not yet unclosed: it holds the rest
    EXPECT_EQ(timeouts, 0u);
    w.expire(10000, 1000, 5000, timeouts, unclosed);
    EXPECT_EQ(unclosed, 1u);
    EXPECT_EQ(timeouts, 2u);
    EXPECT_EQ(w.room(), 4u);
    EXPECT_EQ(w.find(2, c), worker::HandshakeWindow::Found::gone);  // written off: an answer now is late
    // The numbers the ISN carries wrap: connection 2^24 + 5 is found by its low bits.
    worker::HandshakeWindow big(8);
    for (uint64_t i = 0; i < (uint64_t{1} << 24); ++i) {
        big.open(i);
        big.set(i, worker::HandshakeWindow::State::done);
        big.expire(i, 1, 1, timeouts, unclosed);
    }
    for (int i = 0; i < 6; ++i) big.open(0);  // connections 2^24 .. 2^24 + 5 in flight
    ASSERT_EQ(big.find(5, c), worker::HandshakeWindow::Found::in_window);
    EXPECT_EQ(c, (uint64_t{1} << 24) + 5);
}

TEST(HandshakeWindow, TheIsnNamesTheQueueAndTheConnectionAndItsAcksTellSynFromFin) {
    for (uint16_t q : {0, 1, 127})
        for (uint64_t c : {uint64_t{0}, uint64_t{1}, uint64_t{(1u << 24) - 1}, uint64_t{1} << 24, uint64_t{123456789}}) {
            const uint32_t isn = worker::isn_of(q, c);
            EXPECT_EQ(isn & 1, 0u);
            EXPECT_EQ(worker::queue_of_isn(isn), q);
            EXPECT_EQ(worker::number_of_isn(isn), static_cast<uint32_t>(c) & worker::kIsnMask);
            EXPECT_EQ(worker::isn_of_ack(isn + 1), isn);  // acknowledges the SYN
            EXPECT_EQ(worker::isn_of_ack(isn + 2), isn);  // and the FIN
        }
}

// ---- The engine against a simulated listener ------------------------------------------

// A TCP listener as a stack keeps it: per client port the connection's state, every segment
// checked against the numbers it expects, a stack's counters.
struct SimListener {
    uint16_t port = 8080;
    uint32_t drop_every = 0, refuse_every = 0, repeat_every = 0;  // SYNs ignored, refused, SYN-ACKed twice
    bool app_closes = true;  // the application closes what it accepts (FIN after the client's)
    std::deque<std::vector<uint8_t>>* to_client = nullptr;
    enum class St { syn_recv, established, last_ack };
    struct Conn {
        St st;
        uint32_t client_isn, server_isn;
    };
    std::map<uint16_t, Conn> conns;
    uint64_t syns = 0, passive_opens = 0, attempt_fails = 0, estab_resets = 0, fins = 0, closed = 0, errors = 0;
    uint32_t next_isn = 0x10000000;

    void send(const std::vector<uint8_t>& in, const TcpSegment& s, uint32_t seq, uint32_t ack, uint8_t flags) {
        std::vector<uint8_t> out(packet::kMaxReplyLen);
        out.resize(packet::write_reply(out.data(), in.data(), s, seq, ack, flags, 64));
        to_client->push_back(std::move(out));
    }
    void segment(const std::vector<uint8_t>& f) {
        TcpSegment s;
        if (packet::parse_tcp_segment(f.data(), static_cast<uint32_t>(f.size()), s) != SegmentParse::tcp ||
            s.dport != port) {
            ++errors;
            return;
        }
        auto it = conns.find(s.sport);
        if (s.flags == packet::kTcpSyn) {
            ++syns;
            if (it != conns.end()) ++errors;  // a 4-tuple still in use
            if (drop_every && syns % drop_every == 0) return;
            if (refuse_every && syns % refuse_every == 0) {
                send(f, s, 0, s.seq + 1, packet::kTcpRst | packet::kTcpAck);
                return;
            }
            const uint32_t isn = next_isn += 7919;
            conns[s.sport] = {St::syn_recv, s.seq, isn};
            send(f, s, isn, s.seq + 1, packet::kTcpSyn | packet::kTcpAck);
            if (repeat_every && syns % repeat_every == 0) send(f, s, isn, s.seq + 1, packet::kTcpSyn | packet::kTcpAck);
            return;
        }
        if (it == conns.end()) {
            ++errors;  // nothing to answer: a stack would send a RST
            return;
        }
        Conn& c = it->second;
        if (s.flags & packet::kTcpRst) {
            if (s.seq != c.client_isn + 1) ++errors;
            (c.st == St::syn_recv ? attempt_fails : estab_resets) += 1;
            conns.erase(it);
            return;
        }
        if (!(s.flags & packet::kTcpAck)) {
            ++errors;
            return;
        }
        if (c.st == St::syn_recv) {
            if (s.ack != c.server_isn + 1 || s.seq != c.client_isn + 1) {
                ++errors;
                return;
            }
            c.st = St::established;
            ++passive_opens;
        }
        if (s.flags & packet::kTcpFin) {
            ++fins;
            if (app_closes) {
                send(f, s, c.server_isn + 1, c.client_isn + 2, packet::kTcpFin | packet::kTcpAck);
                c.st = St::last_ack;
            }
            return;
        }
        if (c.st == St::last_ack) {
            if (s.seq != c.client_isn + 2 || s.ack != c.server_isn + 2) ++errors;
            ++closed;
            conns.erase(it);
        }
    }
};

// The device: what the engine sends goes straight to the listener; its answers come back on
// the receive side. Everything runs on the engine's thread, in order.
struct SimDevice {
    SimListener listener;
    std::deque<std::vector<uint8_t>> to_client;
    worker::RunControl* ctl = nullptr;
    uint64_t expect_syns = 0;
    uint32_t idle_polls = 0;
};

class SimTx {
public:
    explicit SimTx(SimDevice& d) : d_(d), bufs_(64, std::vector<uint8_t>(packet::kMaxReplyLen)) {
        for (auto& b : bufs_) ptrs_.push_back(b.data());
    }
    void reclaim() {}
    uint32_t room(uint32_t n) const { return std::min<uint32_t>(n, 64 - n_); }
    uint32_t avail(uint32_t n) const { return std::min<uint32_t>(n, 64 - n_); }
    worker::Acquired acquire(uint32_t n) {
        // AF_XDP's queue holds one acquire() until transmit(): a second one would lose the first.
        EXPECT_EQ(n_, 0u) << "acquire() with frames not yet transmitted";
        from_ = n_;
        n_ += n;
        return {n, false, false};
    }
    worker::FrameSpan fresh() const { return {reinterpret_cast<void* const*>(ptrs_.data()), 0, from_, n_}; }
    void set_frame(uint32_t i, uint16_t len, uint32_t) { len_[i] = len; }
    worker::Transmitted transmit() {
        for (uint32_t i = 0; i < n_; ++i) {
            d_.listener.segment(std::vector<uint8_t>(bufs_[i].begin(), bufs_[i].begin() + len_[i]));
            bytes_ += len_[i] + 4u;
        }
        const uint32_t k = n_;
        sent_ += k;
        n_ = 0;
        return {k, false};
    }
    uint64_t issued() const { return sent_ + n_; }
    uint64_t held() const { return n_; }
    uint64_t confirmed() const { return sent_; }
    uint64_t confirmed_bytes() const { return bytes_; }
    uint64_t errors() const { return 0; }
    bool failed() const { return false; }
    void finish() {}
    void drop_held() { n_ = 0; }

private:
    SimDevice& d_;
    std::vector<std::vector<uint8_t>> bufs_;
    std::vector<uint8_t*> ptrs_;
    uint16_t len_[64] = {};
    uint32_t from_ = 0, n_ = 0;
    uint64_t sent_ = 0, bytes_ = 0;
};
static_assert(worker::TxQueueOps<SimTx>);

class SimRx {
public:
    explicit SimRx(SimDevice& d) : d_(d) {}
    uint32_t receive(uint32_t burst) {
        got_.clear();
        while (got_.size() < burst && !d_.to_client.empty()) {
            got_.push_back(std::move(d_.to_client.front()));
            d_.to_client.pop_front();
        }
        // Every SYN sent and nothing left to answer for a while: the run is over.
        if (got_.empty() && d_.listener.syns >= d_.expect_syns && ++d_.idle_polls > 1000)
            d_.ctl->stop_rx.store(true);
        return static_cast<uint32_t>(got_.size());
    }
    const uint8_t* data(uint32_t i) const { return got_[i].data(); }
    uint32_t len(uint32_t i) const { return static_cast<uint32_t>(got_[i].size()); }
    uint64_t wire_bytes(uint32_t i) const { return got_[i].size() + 4; }
    bool csum_verified(uint32_t) const { return false; }
    void release() {}
    void idle() {}

private:
    SimDevice& d_;
    std::vector<std::vector<uint8_t>> got_;
};
static_assert(worker::RxQueueOps<SimRx>);

struct ConnectRun {
    stats::ConnectCounts counts;
    SimListener listener;
    uint64_t timed = 0;
};

// `count` connections through the engine, `outstanding` in flight at most; a SYN unanswered for
// 20 ms (a dropped one: the listener answers at once) has timed out.
ConnectRun connect_to(SimListener listener, uint64_t count, spec::CloseMode close, uint32_t outstanding = 16) {
    SimDevice d;
    d.listener = listener;
    d.listener.to_client = &d.to_client;
    worker::RunControl ctl;
    d.ctl = &ctl;
    d.expect_syns = count;
    stats::QueueCounters tc, rc;
    stats::ConnectCounters cc;
    stats::LatencyHistogram lat;
    const auto syn = packet::build_syn(endpoints(false, false), 1460);
    worker::HandshakeWindow win(outstanding);
    worker::WorkerConfig w;
    w.role = worker::Role::connect;
    w.ctl = &ctl;
    w.tx_counters = &tc;
    w.rx_counters = &rc;
    w.tx.count = count;
    w.tx.burst = w.rx.burst = 8;
    auto& k = w.conn;
    k.window = &win;
    k.counts = &cc;
    k.handshake = &lat;
    k.syn = &syn;
    k.close = close;
    k.listen_port = 8080;
    k.src_port_lo = 10000;
    k.src_port_hi = 10999;
    k.syn_timeout_ns = 20'000'000;
    k.close_timeout_ns = 20'000'000;
    SimTx tx(d);
    SimRx rx(d);
    EXPECT_TRUE(worker::connect_engine(tx, rx, w));
    return {cc.read(), d.listener, lat.count()};
}

TEST(ConnectEngine, RstOpensEveryConnectionOnTheListenerThenResetsIt) {
    const auto r = connect_to(SimListener{}, 1000, spec::CloseMode::rst);
    const auto& c = r.counts;
    EXPECT_EQ(r.listener.errors, 0u);
    EXPECT_EQ(c.syns, 1000u);
    EXPECT_EQ(c.answered, 1000u);
    EXPECT_EQ(r.listener.syns, 1000u);
    EXPECT_EQ(r.listener.passive_opens, 1000u);  // what nstat's TcpPassiveOpens counts on a real stack
    EXPECT_EQ(r.listener.estab_resets, 1000u);
    EXPECT_EQ(r.listener.attempt_fails, 0u);
    EXPECT_TRUE(r.listener.conns.empty());       // nothing left open on the listener
    EXPECT_EQ(c.replies, 2000u);                 // ACK and RST each
    EXPECT_EQ(c.timeouts + c.refused + c.late + c.duplicate + c.other + c.malformed + c.in_flight, 0u);
    EXPECT_EQ(r.timed, 1000u);
    EXPECT_GT(c.per_second(), 0);
}

TEST(ConnectEngine, FinClosesEachConnectionBothWays) {
    const auto r = connect_to(SimListener{}, 500, spec::CloseMode::fin);
    const auto& c = r.counts;
    EXPECT_EQ(r.listener.errors, 0u);
    EXPECT_EQ(c.answered, 500u);
    EXPECT_EQ(r.listener.passive_opens, 500u);
    EXPECT_EQ(r.listener.fins, 500u);
    EXPECT_EQ(r.listener.closed, 500u);  // our ACK of its FIN arrived with the right numbers
    EXPECT_EQ(c.closed, 500u);
    EXPECT_EQ(c.open + c.unclosed + c.resets, 0u);
    EXPECT_EQ(r.listener.estab_resets + r.listener.attempt_fails, 0u);
    EXPECT_TRUE(r.listener.conns.empty());
    EXPECT_EQ(c.replies, 1000u);  // FIN-ACK, then the ACK of the listener's FIN
}

TEST(ConnectEngine, AFinConnectionTheListenerNeverClosesIsCountedUnclosed) {
    SimListener l;
    l.app_closes = false;
    const auto r = connect_to(l, 50, spec::CloseMode::fin, 64);
    EXPECT_EQ(r.counts.answered, 50u);
    EXPECT_EQ(r.counts.closed, 0u);
    EXPECT_EQ(r.counts.unclosed, 50u);  // written off when the run ended
    EXPECT_EQ(r.counts.open, 0u);
}

TEST(ConnectEngine, AbortMeasuresTheHandshakeWithoutOpeningAConnection) {
    const auto r = connect_to(SimListener{}, 800, spec::CloseMode::abort);
    EXPECT_EQ(r.listener.errors, 0u);
    EXPECT_EQ(r.counts.answered, 800u);
    EXPECT_EQ(r.listener.passive_opens, 0u);
    EXPECT_EQ(r.listener.attempt_fails, 800u);
    EXPECT_TRUE(r.listener.conns.empty());
    EXPECT_EQ(r.counts.replies, 800u);
}

TEST(ConnectEngine, EverySynEndsAnsweredRefusedOrTimedOut) {
    SimListener l;
    l.drop_every = 10;    // 100 of 1000 never answered
    l.refuse_every = 7;   // RST for these (the dropped ones excepted: the drop is decided first)
    l.repeat_every = 13;  // a SYN-ACK twice: answered once, counted a duplicate
    const auto r = connect_to(l, 1000, spec::CloseMode::rst, 32);
    const auto& c = r.counts;
    uint64_t dropped = 0, refused = 0, repeated = 0;
    for (uint64_t i = 1; i <= 1000; ++i) {
        if (i % 10 == 0) {
            ++dropped;
        } else if (i % 7 == 0) {
            ++refused;
        } else if (i % 13 == 0) {
            ++repeated;
        }
    }
    EXPECT_EQ(c.syns, 1000u);
    EXPECT_EQ(c.timeouts, dropped);
    EXPECT_EQ(c.refused, refused);
    EXPECT_EQ(c.answered, 1000 - dropped - refused);
    // A repeated SYN-ACK read while its connection is still in the window is a duplicate and
    // answered again (ACK, RST); read after the window slid past it, it is late and answered
    // with a RST. Either way the first answer had already reset the connection: the listener
    // finds none there for these (its errors).
    EXPECT_EQ(c.duplicate + c.late, repeated);
    EXPECT_EQ(r.listener.errors, 2 * c.duplicate + c.late);
    EXPECT_EQ(c.syns, c.answered + c.refused + c.timeouts + c.in_flight);
    EXPECT_EQ(r.listener.passive_opens, c.answered);
    EXPECT_EQ(r.timed, c.answered);
}

TEST(ConnectEngine, NoTwoConnectionsInFlightShareASourcePort) {
    // 1000 ports, 16 in flight: the listener sees no 4-tuple reused while still in use.
    const auto r = connect_to(SimListener{}, 5000, spec::CloseMode::rst, 16);
    EXPECT_EQ(r.listener.errors, 0u);
    EXPECT_EQ(r.counts.answered, 5000u);
}

}  // namespace
