// Answers questions about hands with majiang-core itself, for tests/hand_vs_core.rs: one
// question a line on stdin (tab-separated), one answer a line on stdout, in the same order.
//
//   X <hand>                         -> Majiang.Util.xiangting
//   W <hand> <rongpai|-> <zf> <mf>   -> <complete> <has a yaku>: Util.hule with riichi
//                                       declared (so any complete hand has a yaku), and with
//                                       no situational yaku as Game.allow_hule asks it
//   O <hand> <riichi 0|1>            -> get_dapai(true) and get_gang_mianzi(), ',' joined
//   C <hand> <tile> <mark>           -> get_chi_mianzi(tile+mark, true) and get_peng_mianzi
//
// Hands are majiang-core strings (`m123p406z11m5,p444+`); with 14 tiles the last is the draw.
"use strict";

const path = require('path');
const Majiang = require(path.join(__dirname,
                        'node_modules/@kobalab/majiang-core'));

const rule = Majiang.rule();

function answer(fields) {
    const [kind, hand] = fields;
    const shoupai = Majiang.Shoupai.fromString(hand);
    if (kind == 'X') return String(Majiang.Util.xiangting(shoupai));
    if (kind == 'W') {
        const rongpai = fields[2] == '-' ? null : fields[2];
        const param = (lizhi) => ({
            rule: rule, zhuangfeng: +fields[3], menfeng: +fields[4],
            hupai: lizhi ? { lizhi: 1 } : {}, baopai: [], fubaopai: null,
            jicun: { changbang: 0, lizhibang: 0 },
        });
        const complete = Majiang.Util.hule(shoupai, rongpai, param(true));
        const plain = Majiang.Util.hule(shoupai, rongpai, param(false));
        return [complete ? 1 : 0, plain && plain.hupai != null ? 1 : 0].join('\t');
    }
    if (kind == 'O') {
        if (fields[2] == '1') shoupai._lizhi = true;
        const dapai = shoupai.get_dapai(true) || [];
        const gang = shoupai.get_gang_mianzi() || [];
        return [dapai.join(','), gang.join(',')].join('\t');
    }
    if (kind == 'C') {
        const p = fields[2] + fields[3];
        const chi = shoupai.get_chi_mianzi(p, true) || [];
        const peng = shoupai.get_peng_mianzi(p) || [];
        return [chi.join(','), peng.join(',')].join('\t');
    }
    throw new Error('unknown question: ' + fields.join(' '));
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', chunk => input += chunk);
process.stdin.on('end', () => {
    const out = [];
    for (const line of input.split('\n')) {
        if (!line) continue;
        let reply;
        try {
            reply = answer(line.split('\t'));
        }
        catch (e) {
            reply = 'ERROR ' + String(e.message || e).replace(/\s+/g, ' ');
        }
        out.push(reply);
    }
    process.stdout.write(out.join('\n') + '\n');
});
