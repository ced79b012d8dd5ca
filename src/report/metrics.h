// Prometheus exposition (--metrics [ADDR:]PORT): /metrics served by prometheus-cpp while the
// process runs, fed from the control thread's snapshots (never a worker's cache lines).
// Counters keep growing across trials; gauges hold the last interval's rates, loss and latency
// (their values and labels from report/metric_values.h).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "result/sink.h"

namespace prometheus {
class Exposer;
class Registry;
template <typename T>
class Family;
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace lr::report {

class MetricsSink final : public result::Sink {
public:
    // listen: "PORT" (loopback) or "ADDR:PORT". Throws UsageError for a bad value, EnvError
    // when it cannot listen.
    explicit MetricsSink(const std::string& listen);
    // No server of its own: another one serves exposition() (`linerate serve`'s /metrics).
    // `constant_labels` go on every series (an engine's host); `flow_label`: streams are OTG
    // flows, labelled flow as well as stream.
    explicit MetricsSink(std::map<std::string, std::string> constant_labels = {}, bool flow_label = false);
    // The registry in Prometheus' text format.
    std::string exposition() const;
    ~MetricsSink() override;
    void trial_started(const result::TrialStart& t) override;
    void snapshot(const std::vector<stats::QueueId>& ids, const stats::Snapshot& s) override;
    void interval(const stats::IntervalRow& row) override;
    void streams_live(const std::vector<result::StreamLive>& v) override;
    void impair_live(const std::vector<result::ImpairLive>& v) override;
    void connect_live(const std::vector<result::ConnectLive>& v) override;
    void trial_finished(const result::TrialResult& r) override;
    const std::string& address() const { return address_; }

private:
    void add(prometheus::Family<prometheus::Counter>& f, const std::map<std::string, std::string>& labels,
             uint64_t cur, uint64_t& last);

    std::string address_;
    std::map<std::string, std::string> constant_labels_;
    bool flow_label_ = false;
    std::unique_ptr<prometheus::Exposer> exposer_;
    std::shared_ptr<prometheus::Registry> registry_;
    void build_families();
    prometheus::Family<prometheus::Counter>*packets_, *bytes_, *drops_, *rx_class_, *stream_packets_, *stream_frames_,
        *impair_, *connect_;
    prometheus::Family<prometheus::Gauge>*impair_held_, *connect_waiting_;
    prometheus::Family<prometheus::Gauge>* stream_gaps_;
    prometheus::Family<prometheus::Gauge>*rate_pps_, *rate_bps_, *lost_, *latency_, *trials_, *info_;
    prometheus::Family<prometheus::Histogram>* latency_hist_;
    std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges_;  // the interval's, by name
    std::map<std::string, uint64_t> last_;  // per series: the value last added (trial-relative)
    bool named_streams_ = false;  // the trial's streams were given (--stream, OTG flows), not the one implicit
};

}  // namespace lr::report
