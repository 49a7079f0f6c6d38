# ns-2.35 side of bench/vs_ns2.py: builds the network an aqmlab scenario describes
# and prints what aqmlab's result tables hold, as RESULT lines.
#
#   ns peer.tcl SPEC.tcl
#
# SPEC.tcl is written by bench/ns2/translate.py from an aqmlab scenario; it calls
# the procedures below (`run`, `node`, `link`, `tcp`, `cbr`) and sets nothing else.
# Every ns-2 default that differs from aqmlab's model is overridden here or in the
# spec; bench/ns2/README.md lists what is matched.

set ns [new Simulator]
set nodes [dict create]
set links {}
set flows {}
array set RUN {duration 100 warmup 20 seed 1 queue_interval 0 series 0}

proc run {args} {
    global RUN defaultRNG
    array set RUN $args
    $defaultRNG seed $RUN(seed)
}

proc node {name} {
    global ns nodes
    dict set nodes $name [$ns node]
}

proc nodeof {name} {
    global nodes
    if {![dict exists $nodes $name]} { puts stderr "spec: unknown node $name"; exit 2 }
    return [dict get $nodes $name]
}

# One link direction: `link FROM TO RATE DELAY QCLASS {var value ...} MONITOR`.
# Class defaults are set before the link is made (some queues read them when
# constructed) and again on the instance.
proc link {from to rate delay qclass qvars monitor} {
    global ns links
    foreach {k v} $qvars { Queue/$qclass set $k $v }
    $ns simplex-link [nodeof $from] [nodeof $to] $rate $delay $qclass
    set q [[$ns link [nodeof $from] [nodeof $to]] queue]
    foreach {k v} $qvars { $q set $k $v }
    set fmon ""
    if {$monitor} {
        set fmon [$ns makeflowmon Fid]
        $ns attach-fmon [$ns link [nodeof $from] [nodeof $to]] $fmon
        set pint [new Integrator]
        $fmon set-pkts-integrator $pint
    }
    lappend links [list "$from->$to" $fmon [bw_bps $rate] $q]
}

proc bw_bps {r} {
    foreach {suf m} {Gb 1e9 Mb 1e6 Kb 1e3 b 1} {
        if {[string match *$suf $r]} { return [expr {[string range $r 0 end-[string length $suf]] * $m}] }
    }
    return $r
}

# A TCP flow: `tcp ID SRC DST START STOP {var value ...}` (Agent/TCP variables,
# plus `variant`, `sink` and `delack_interval`).
proc tcp {id src dst start stop vars} {
    global ns flows
    array set V {variant Newreno sink TCPSink delack_interval 0.1}
    array set V $vars
    set cls [expr {$V(variant) eq "Tahoe" ? "Agent/TCP" : "Agent/TCP/$V(variant)"}]
    set a [new $cls]
    foreach {k v} $vars {
        if {$k ni {variant sink delack_interval}} { $a set $k $v }
    }
    $a set fid_ $id
    set k [new Agent/$V(sink)]
    if {[string match *DelAck $V(sink)]} { $k set interval_ $V(delack_interval) }
    $k set packetSize_ 40
    $ns attach-agent [nodeof $src] $a
    $ns attach-agent [nodeof $dst] $k
    $ns connect $a $k
    set app [new Application/FTP]
    $app attach-agent $a
    $ns at $start "$app start"
    if {$stop ne ""} { $ns at $stop "$app stop" }
    lappend flows [list $id tcp $a $k]
}

# A constant-bit-rate UDP flow: `cbr ID SRC DST START STOP RATE SIZE`.
proc cbr {id src dst start stop rate size} {
    global ns flows
    set u [new Agent/UDP]
    $u set fid_ $id
    $u set packetSize_ $size
    set k [new Agent/LossMonitor]
    $ns attach-agent [nodeof $src] $u
    $ns attach-agent [nodeof $dst] $k
    $ns connect $u $k
    set app [new Application/Traffic/CBR]
    $app set packetSize_ $size
    $app set rate_ $rate
    $app set random_ 0
    $app attach-agent $u
    $ns at $start "$app start"
    if {$stop ne ""} { $ns at $stop "$app stop" }
    lappend flows [list $id cbr $u $k]
    set ::cbrapp($id) $app
}

# `rate ID T RATE`: the CBR flow ID sends at RATE from time T on.
proc rate {id t r} {
    global ns
    $ns at $t "$::cbrapp($id) set rate_ $r"
}

# ---- measuring ------------------------------------------------------------------

proc qint {fmon now} {
    set pint [$fmon get-pkts-integrator]
    $pint newpoint $now [$fmon set pkts_]
    return [$pint set sum_]
}

# Every counter at time `now`, into S(tag,...).
proc take {tag} {
    global ns links flows S
    set now [$ns now]
    foreach l $links {
        lassign $l name fmon
        if {$fmon eq ""} continue
        foreach v {parrivals_ pdepartures_ bdepartures_ pdrops_ pmarks_} { set S($tag,$name,$v) [$fmon set $v] }
        set S($tag,$name,qint) [qint $fmon $now]
        foreach f [$fmon flows] {
            set id [$f set flowid_]
            foreach v {parrivals_ pdepartures_ bdepartures_ pdrops_ pmarks_} { set S($tag,$name,$id,$v) [$f set $v] }
        }
    }
    foreach f $flows {
        lassign $f id kind a k
        if {$kind eq "tcp"} {
            foreach v {ndatapack_ nrexmitpack_ nrexmit_ ack_} { set S($tag,f$id,$v) [$a set $v] }
        } else {
            foreach v {npkts_ nlost_} { set S($tag,f$id,$v) [$k set $v] }
        }
    }
}

proc sget {key} {
    global S
    if {[info exists S($key)]} { return $S($key) }
    return 0
}

# Queue samples every RUN(queue_interval) s and per-flow counters every
# RUN(series) s on every monitored link, from the warm-up on.
proc sample {} {
    global ns links RUN
    set now [$ns now]
    foreach l $links {
        lassign $l name fmon
        if {$fmon eq ""} continue
        puts "QUEUE $name [format %.6f $now] [$fmon set pkts_]"
    }
    $ns at [expr {$now + $RUN(queue_interval)}] sample
}

proc series {} {
    global ns links RUN
    set now [$ns now]
    foreach l $links {
        lassign $l name fmon
        if {$fmon eq ""} continue
        set row {}
        foreach f [$fmon flows] { lappend row [$f set flowid_] [$f set pdepartures_] [$f set bdepartures_] [$f set pdrops_] [$f set pmarks_] }
        puts "SERIES $name [format %.6f $now] $row"
    }
    $ns at [expr {$now + $RUN(series)}] series
}

proc finish {} {
    global ns links flows RUN S
    take end
    set T [expr {$RUN(duration) - $RUN(warmup)}]
    puts "RESULT run duration=$RUN(duration) warmup=$RUN(warmup) seed=$RUN(seed)"
    foreach l $links {
        lassign $l name fmon rate
        if {$fmon eq ""} continue
        set line "RESULT link name=$name rate_bps=$rate"
        foreach v {parrivals_ pdepartures_ bdepartures_ pdrops_ pmarks_} {
            append line " $v=[expr {$S(end,$name,$v) - $S(w,$name,$v)}]"
        }
        append line " mean_queue=[expr {($S(end,$name,qint) - $S(w,$name,qint)) / $T}]"
        puts $line
        foreach f $flows {
            set id [lindex $f 0]
            if {![info exists S(end,$name,$id,parrivals_)]} continue
            set line "RESULT linkflow link=$name flow=$id"
            foreach v {parrivals_ pdepartures_ bdepartures_ pdrops_ pmarks_} {
                append line " $v=[expr {[sget end,$name,$id,$v] - [sget w,$name,$id,$v]}]"
            }
            puts $line
        }
    }
    foreach f $flows {
        lassign $f id kind
        set line "RESULT flow id=$id kind=$kind"
        foreach v {ndatapack_ nrexmitpack_ nrexmit_ ack_ npkts_ nlost_} {
            if {[info exists S(end,f$id,$v)]} { append line " $v=[expr {$S(end,f$id,$v) - [sget w,f$id,$v]}]" }
        }
        puts $line
    }
    exit 0
}

if {[llength $argv] != 1} { puts stderr "usage: ns peer.tcl SPEC.tcl"; exit 2 }
source [lindex $argv 0]
# A flow that has not started by the warm-up has every counter at 0 there.
$ns at $RUN(warmup) "take w"
if {$RUN(queue_interval) > 0} { $ns at $RUN(warmup) sample }
if {$RUN(series) > 0} { $ns at $RUN(warmup) series }
$ns at $RUN(duration) finish
$ns run
