import http.server, threading, socketserver, json, base64, os
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

os.chdir('/tmp/spike')
handler = http.server.SimpleHTTPRequestHandler
httpd = socketserver.TCPServer(("127.0.0.1", 0), handler)
port = httpd.server_address[1]
threading.Thread(target=httpd.serve_forever, daemon=True).start()

opts = Options()
for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]:
    opts.add_argument(a)
opts.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
try:
    driver.set_script_timeout(60)
    driver.get(f"http://localhost:{port}/page.html")
    va = VirtualAuthenticatorOptions()
    va.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2
    va.transport = VirtualAuthenticatorOptions.Transport.INTERNAL
    va.has_resident_key = True; va.has_user_verification = True; va.is_user_verified = True
    driver.add_virtual_authenticator(va)
    result = driver.execute_async_script("""
      const done = arguments[arguments.length-1];
      const b64 = b => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\\+/g,'-').replace(/\\//g,'_').replace(/=+$/,'');
      navigator.credentials.create({publicKey: {
        challenge: new Uint8Array(32).fill(7), rp: {id: "localhost", name: "Spike"},
        user: {id: new Uint8Array([1,2,3]), name: "ada", displayName: "Ada"},
        pubKeyCredParams: [{type: "public-key", alg: -7}, {type:"public-key", alg:-8}, {type:"public-key", alg:-257}],
        authenticatorSelection: {residentKey: "required", userVerification: "required"}, attestation: "direct"}})
      .then(c => done({ok: true, json: c.toJSON ? c.toJSON() : null, id: c.id, att: b64(c.response.attestationObject)}))
      .catch(e => done({ok: false, error: String(e)}));
    """)
    json.dump(result['json'], open('/tmp/spike/registration.json','w'), indent=2, sort_keys=True)
    got = driver.execute_async_script("""
      const done = arguments[arguments.length-1];
      navigator.credentials.get({publicKey: {challenge: new Uint8Array(32).fill(9), rpId: "localhost", userVerification: "required"}})
      .then(c => done({ok: true, json: c.toJSON ? c.toJSON() : null})).catch(e => done({ok:false, error:String(e)}));
    """)
    json.dump(got['json'], open('/tmp/spike/authentication.json','w'), indent=2, sort_keys=True)
finally:
    driver.quit(); httpd.shutdown()
